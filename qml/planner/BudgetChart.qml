// The Planner's chart: predicted tokens/s and hit rate against the RAM budget, with a
// one-line legend, and the marked budgets and zones over the plot (BudgetChartOverlay). All
// its arithmetic (GiB or MiB, round ticks that fit, where a budget lies) is PlannerChart's.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtCharts
import WasteStudio
import WasteStudio.Core

Item {
    id: chartBox
    objectName: "plannerChartBox"
    // Whose plan it draws: the Planner's open model, or a release before download (the
    // release plan card's ReleasePlanController.chart).
    property PlannerController source: PlannerController
    // The chosen budget's line: the Planner's slider; a release plan marks its default only.
    property bool showsBudget: true
    // The budget slider under the chart sits on the same axis, under the plot.
    readonly property alias axes: axes
    readonly property rect plotArea: chart.plotArea

    // A readable plot at the font in use.
    Layout.minimumHeight: axes.minimumHeight

    PlannerChart {
        id: axes
        axisMinBytes: chartBox.source.axisMinBytes
        axisMaxBytes: chartBox.source.axisMaxBytes
        maxTokensPerSecond: chartBox.source.maxTokensPerSecond
        points: chartBox.source.points
        plotWidth: chart.plotArea.width
        labelPixelSize: Theme.fontSmall
        labelGap: Theme.padding
        floorBytes: chartBox.source.floorBytes
        cliffBytes: chartBox.source.cliffBytes
        budgetBytes: chartBox.source.budget
        // The marked budgets, each with a short name beside its line.
        marks: [
            { name: qsTr("floor"), bytes: chartBox.source.floorBytes, color: Theme.text },
            { name: qsTr("default"), bytes: chartBox.source.defaultBytes, color: Theme.accent },
            { name: qsTr("paging cliff %1").arg(Units.bytes(chartBox.source.cliffBytes)),
              bytes: chartBox.source.cliffBytes > 0 ? chartBox.source.cliffBytes : -1, color: Theme.danger },
            { name: qsTr("7/8 RAM"), bytes: chartBox.source.capBytes, color: Theme.warning },
            { name: qsTr("other programs %1").arg(Units.bytes(chartBox.source.otherBytes)),
              bytes: chartBox.source.besideOthersBytes, color: Theme.textMuted }
        ]
    }

    // The series legend, drawn here rather than by the chart so it takes one short line.
    Row {
        id: seriesLegend
        anchors.right: overlay.right
        anchors.top: parent.top
        spacing: Theme.padding
        Repeater {
            model: [
                { name: qsTr("predicted tokens/s"), color: Theme.accent, dashed: false },
                { name: qsTr("predicted hit rate"), color: Theme.ok, dashed: true }
            ]
            delegate: Row {
                id: entry
                required property var modelData
                spacing: Theme.unit
                Row {
                    anchors.verticalCenter: parent.verticalCenter
                    spacing: 2
                    Repeater {
                        model: entry.modelData.dashed ? 3 : 1
                        delegate: Rectangle {
                            width: entry.modelData.dashed ? 5 : 19
                            height: entry.modelData.dashed ? 2 : 3
                            color: entry.modelData.color
                        }
                    }
                }
                Label {
                    text: parent.modelData.name
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                }
            }
        }
    }

    ChartView {
        id: chart
        objectName: "plannerChart"
        anchors.fill: parent
        anchors.topMargin: seriesLegend.height
        antialiasing: true
        backgroundColor: "transparent"
        plotAreaColor: "transparent"
        legend.visible: false
        margins.top: 0; margins.bottom: 0; margins.left: 0; margins.right: 0
        Accessible.name: qsTr("Predicted tokens per second and hit rate against the RAM budget")

        // The unit rides on the tick labels ("40 GiB"): no axis title line under them.
        ValueAxis {
            id: axisX
            objectName: "budgetAxis"
            min: axes.budgetMin
            max: axes.budgetMax
            labelFormat: axes.budgetLabelFormat
            tickCount: axes.budgetTickCount
            color: Theme.border
            gridLineColor: Theme.border
            labelsColor: Theme.textMuted
            labelsFont.pixelSize: Theme.fontSmall
        }
        ValueAxis {
            id: axisSpeed
            objectName: "speedAxis"
            min: 0
            max: axes.speedMax
            titleText: qsTr("tokens/s")
            labelFormat: axes.speedLabelFormat
            tickCount: axes.speedTickCount
            color: Theme.border
            gridLineColor: Theme.border
            labelsColor: Theme.textMuted
            labelsFont.pixelSize: Theme.fontSmall
            titleBrush: Theme.textMuted
            titleFont.pixelSize: Theme.fontSmall
        }
        ValueAxis {
            id: axisHit
            objectName: "hitAxis"
            min: 0
            max: 100
            titleText: qsTr("hit rate (%)")
            labelFormat: "%.0f"
            tickCount: 5
            color: Theme.border
            gridVisible: false
            labelsColor: Theme.textMuted
            labelsFont.pixelSize: Theme.fontSmall
            titleBrush: Theme.textMuted
            titleFont.pixelSize: Theme.fontSmall
        }
        LineSeries {
            id: speedSeries
            name: qsTr("predicted tokens/s")
            axisX: axisX
            axisY: axisSpeed
            color: Theme.accent
            width: 2.5
        }
        LineSeries {
            id: hitSeries
            name: qsTr("predicted hit rate")
            axisX: axisX
            axisYRight: axisHit
            color: Theme.ok
            width: 1.5
            style: Qt.DashLine
        }

        function fill() {
            speedSeries.clear()
            hitSeries.clear()
            for (const p of axes.speedPoints)
                speedSeries.append(p.x, p.y)
            for (const p of axes.hitPoints)
                hitSeries.append(p.x, p.y)
        }
        // PlannerChart signals once the points are in the axis' unit: after a new plan, and
        // when a plan switches between GiB and MiB.
        Connections {
            target: axes
            function onSeriesChanged() { chart.fill() }
        }
        Component.onCompleted: fill()
    }

    // Markers and zones over the plot area, on the chart's x axis.
    BudgetChartOverlay {
        id: overlay
        axes: axes
        budgetLevel: chartBox.source.budgetLevel
        showsBudget: chartBox.showsBudget
        anchors.left: chart.left
        anchors.leftMargin: chart.plotArea.x
        anchors.top: chart.top
        anchors.topMargin: chart.plotArea.y
        width: chart.plotArea.width
        height: chart.plotArea.height
    }
}
