// Planner: where the RAM goes, and what each budget buys. The model's fixed costs as a
// stacked bar, the predicted speed and hit rate against budget with the floor, the
// default, 7/8 of RAM, what other programs hold and the paging cliff marked, and a budget
// slider on the same axis with one sentence saying what the choice means.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtCharts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: qsTr("Planner")
    // Short: the header row does not wrap, and the page must fit a 900x600 window.
    subtitle: PlannerController.container !== ""
              ? (EngineController.modelName || PlannerController.container.split("/").pop())
              : qsTr("RAM budget: floor, default, paging cliff")

    // The chart's unit: GiB for real models, MiB for tiny ones (the demo, test containers).
    readonly property bool inMiB: PlannerController.axisMaxBytes < 4 * 1024 * 1024 * 1024
    readonly property real axisUnit: inMiB ? 1024 * 1024 : 1024 * 1024 * 1024
    readonly property var contexts: [4096, 8192, 32768, 131072, 262144, 1048576]
    readonly property var contextNames: ["4K", "8K", "32K", "128K", "256K", "1M"]

    actions: [
        Label { text: qsTr("Context"); color: Theme.textMuted },
        ComboBox {
            objectName: "contextBox"
            Layout.preferredWidth: 96
            model: page.contextNames
            currentIndex: Math.max(0, page.contexts.indexOf(PlannerController.contextTokens))
            Accessible.name: qsTr("Context length")
            onActivated: (i) => PlannerController.contextTokens = page.contexts[i]
        },
        Button {
            objectName: "measureDiskButton"
            text: PlannerController.measuringDisk ? qsTr("Measuring…") : qsTr("Measure disk")
            enabled: PlannerController.container !== "" && !PlannerController.measuringDisk
            Accessible.name: qsTr("Measure the model disk's speed with direct reads")
            onClicked: PlannerController.measureDisk()
        },
        // Both measurements that feed the prediction, side by side.
        Button {
            objectName: "recalibrateButton"
            text: PlannerController.calibrating ? qsTr("Measuring…") : qsTr("Measure compute")
            enabled: !PlannerController.calibrating
            Accessible.name: qsTr("Measure this machine's compute speed again")
            onClicked: PlannerController.recalibrate()
        },
        Button {
            objectName: "planReleaseButtonReady"
            visible: PlannerController.ready
            flat: true
            text: qsTr("Plan a release…")
            Accessible.name: qsTr("Plan a Hugging Face release from its config.json")
            onClicked: releasePopup.open()
        }
    ]

    // A remote engine's model lives in that server's memory: no RAM figures apply here.
    Rectangle {
        objectName: "plannerRemote"
        anchors.fill: parent
        z: 10
        visible: EngineController.remote
        color: Theme.background
        Label {
            anchors.centerIn: parent
            width: Math.min(parent.width, 480)
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.WordWrap
            font.pixelSize: Theme.fontLarge
            color: Theme.text
            text: qsTr("%1 runs on the remote engine at %2: its memory is that server's, so there is no RAM budget to plan on this computer.")
                  .arg(EngineController.modelName).arg(EngineController.modelInfo.baseUrl || "")
        }
    }

    // Empty and error states
    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width, 480)
        visible: !PlannerController.ready
        spacing: Theme.spacing
        Label {
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.WordWrap
            font.pixelSize: Theme.fontLarge + 2
            color: PlannerController.error !== "" ? Theme.danger : Theme.text
            text: PlannerController.busy ? qsTr("Reading the model's plan…")
                  : PlannerController.error !== "" ? qsTr("The plan could not be made")
                  : qsTr("No model to plan for yet")
        }
        Label {
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            text: PlannerController.error !== "" ? PlannerController.error
                  : qsTr("Open a model on the Models page: the planner reads its manifest and shows the RAM it needs.")
        }
        BusyIndicator { Layout.alignment: Qt.AlignHCenter; running: PlannerController.busy; visible: running }
        Button {
            objectName: "planReleaseButton"
            Layout.alignment: Qt.AlignHCenter
            text: qsTr("Plan a release before downloading it…")
            Accessible.name: qsTr("Plan a Hugging Face release from its config.json")
            onClicked: releasePopup.open()
        }
    }

    // A release planned from its config.json alone (as `waste plan --config`): the container
    // with its experts as VQ3R and as the release ships them, side by side, on a chosen machine.
    Popup {
        id: releasePopup
        objectName: "releasePlanPopup"
        parent: Overlay.overlay
        anchors.centerIn: parent
        width: Math.min(parent ? parent.width - 2 * Theme.padding : 760, 760)
        modal: true
        padding: Theme.padding
        background: Rectangle { color: Theme.background; border.color: Theme.border; radius: Theme.radius }
        contentItem: ColumnLayout {
            spacing: Theme.spacing
            Label {
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                color: Theme.text
                font.bold: true
                text: qsTr("Plan a release before downloading it")
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                text: qsTr("Its config.json (a few KB from the hub) is enough: the container with the experts as 3-bit VQ codes and, where the release ships them quantised, as released.")
            }
            TextField {
                objectName: "plannerReleaseRepo"
                Layout.fillWidth: true
                placeholderText: qsTr("owner/name, e.g. moonshotai/Kimi-K3")
                Accessible.name: qsTr("Repository to plan")
                onTextChanged: releaseCard.repo = text
            }
            ReleasePlanCard {
                id: releaseCard
                objectName: "plannerReleaseCard"
                // The hub address set in Settings, as the Models page plans with (a mirror too).
                endpoint: DownloadManager.endpoint
                Layout.fillWidth: true
            }
            Button {
                Layout.alignment: Qt.AlignRight
                text: qsTr("Close")
                onClicked: releasePopup.close()
            }
        }
    }

    // The plan. The chart keeps a readable height; when the window is too short for it and
    // the text around it (a large font), the page scrolls rather than squashing the chart.
    Flickable {
        id: scroller
        objectName: "plannerScroll"
        anchors.fill: parent
        visible: PlannerController.ready
        clip: true
        contentWidth: width
        contentHeight: planColumn.height
        boundsBehavior: Flickable.StopAtBounds
        ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }

        ColumnLayout {
            id: planColumn
            width: scroller.width
            height: Math.max(scroller.height, implicitHeight)
            spacing: Theme.spacing

            // Fixed costs: the floor, stacked
            ColumnLayout {
                Layout.fillWidth: true
                spacing: Theme.unit
                RowLayout {
                    Label {
                        text: qsTr("Floor %1").arg(Units.bytes(PlannerController.floorBytes))
                        font.pixelSize: Theme.fontLarge
                        font.bold: true
                        color: Theme.text
                    }
                    Label {
                        Layout.fillWidth: true
                        elide: Text.ElideRight
                        text: qsTr("— the least RAM this model opens with at a %1 context").arg(page.contextNames[Math.max(0, page.contexts.indexOf(PlannerController.contextTokens))])
                        color: Theme.textMuted
                    }
                }
                Row {
                    id: stack
                    Layout.fillWidth: true
                    height: 14
                    readonly property var parts: [
                        { name: qsTr("Trunk"), bytes: PlannerController.trunkBytes, color: Theme.accent },
                        { name: qsTr("Attention state"), bytes: PlannerController.stateBytes, color: Theme.ok },
                        { name: qsTr("Scratch"), bytes: PlannerController.scratchBytes, color: Theme.textMuted },
                        { name: qsTr("Minimum expert cache"), bytes: PlannerController.minExpertCacheBytes, color: Theme.warning }
                    ]
                    Repeater {
                        model: stack.parts
                        delegate: Rectangle {
                            required property var modelData
                            width: PlannerController.floorBytes > 0 ? Math.max(2, stack.width * modelData.bytes / PlannerController.floorBytes) : 0
                            height: stack.height
                            color: modelData.color
                            Accessible.name: modelData.name + " " + Units.bytes(modelData.bytes)
                        }
                    }
                }
                Flow {
                    Layout.fillWidth: true
                    spacing: Theme.padding
                    Repeater {
                        model: stack.parts
                        delegate: Row {
                            required property var modelData
                            spacing: Theme.unit
                            Rectangle { width: 10; height: 10; radius: 2; color: parent.modelData.color; anchors.verticalCenter: parent.verticalCenter }
                            Label {
                                text: parent.modelData.name + " " + Units.bytes(parent.modelData.bytes)
                                color: Theme.textMuted
                                font.pixelSize: Theme.fontSmall
                            }
                        }
                    }
                }
            }

            // The chart
            Item {
                id: chartBox
                objectName: "plannerChartBox"
                Layout.fillWidth: true
                Layout.fillHeight: true
                // Enough for a plot of about 120 px under the legend and over the tick labels
                // (these grow with the font, and so does this).
                Layout.minimumHeight: 100 + 6 * Theme.fontSmall

                // Round ticks: the budget axis widened to multiples of a 1, 2, 5, 10… step, tokens/s
                // from 0 to a round top. Fixed tick counts (never a tick interval): while a new plan
                // arrives the axis range and its step change one after the other, and an interval
                // from the old range over the new one would ask the chart for millions of ticks.
                // At most 8 budget intervals, and no more than the plot has room for side by side at
                // the font in use: the chart elides a tick label wider than its interval to "…".
                readonly property real budgetStep: {
                    void tickMetrics.font.pixelSize // measured again when the font changes
                    return fittingBudgetStep(chart.plotArea.width)
                }
                readonly property real budgetLo: rangeLo(budgetStep)
                readonly property real budgetHi: rangeHi(budgetStep)
                function rangeLo(step) {
                    return step > 0 ? Math.max(0, Math.floor(PlannerController.axisMinBytes / page.axisUnit / step + 1e-9) * step)
                                    : PlannerController.axisMinBytes / page.axisUnit
                }
                function rangeHi(step) {
                    const lo = rangeLo(step)
                    return step > 0 ? Math.max(lo + step, Math.ceil(PlannerController.axisMaxBytes / page.axisUnit / step - 1e-9) * step)
                                    : lo + 1
                }
                // What the budget axis writes at value v for a step (its labelFormat, in JavaScript).
                function budgetLabel(v, step) {
                    return v.toFixed(PlannerController.stepDecimals(step)) + (page.inMiB ? " MiB" : " GiB")
                }
                // The finest round step, from 8 intervals down, whose widest label and a gap fit each
                // interval of a plot `room` px wide (the coarsest when none does; 8 before the plot
                // has a width).
                function fittingBudgetStep(room) {
                    const span = (PlannerController.axisMaxBytes - PlannerController.axisMinBytes) / page.axisUnit
                    let step = 0
                    for (let n = 8; n >= 1; --n) {
                        step = PlannerController.niceStep(span, n)
                        if (!(step > 0) || !(room > 0))
                            return step
                        const lo = rangeLo(step)
                        const count = Math.round((rangeHi(step) - lo) / step)
                        let widest = 0
                        for (let i = 0; i <= count; ++i)
                            widest = Math.max(widest, tickMetrics.advanceWidth(budgetLabel(lo + i * step, step)))
                        if (room / count >= widest + Theme.padding)
                            return step
                    }
                    return step
                }
                FontMetrics {
                    id: tickMetrics
                    font.pixelSize: Theme.fontSmall
                }
                readonly property real speedTop: PlannerController.maxTokensPerSecond > 0 ? PlannerController.maxTokensPerSecond * 1.05 : 0.1
                readonly property real speedStep: PlannerController.niceStep(speedTop, 4)
                readonly property real speedMax: speedStep > 0 ? Math.ceil(speedTop / speedStep - 1e-9) * speedStep : speedTop
                function ticks(lo, hi, step) {
                    return step > 0 ? Math.min(12, Math.max(2, Math.round((hi - lo) / step) + 1)) : 5
                }

                // The series legend, drawn here rather than by the chart so it takes one short line.
                Row {
                    id: seriesLegend
                    anchors.right: parent.right
                    anchors.rightMargin: chart.width - chart.plotArea.x - chart.plotArea.width
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
                        min: chartBox.budgetLo
                        max: chartBox.budgetHi
                        labelFormat: "%." + PlannerController.stepDecimals(chartBox.budgetStep) + "f " + (page.inMiB ? "MiB" : "GiB")
                        tickCount: chartBox.ticks(min, max, chartBox.budgetStep)
                        color: Theme.border
                        gridLineColor: Theme.border
                        labelsColor: Theme.textMuted
                        labelsFont.pixelSize: Theme.fontSmall
                    }
                    ValueAxis {
                        id: axisSpeed
                        objectName: "speedAxis"
                        min: 0
                        max: chartBox.speedMax
                        titleText: qsTr("tokens/s")
                        labelFormat: "%." + PlannerController.stepDecimals(chartBox.speedStep) + "f"
                        tickCount: chartBox.ticks(0, max, chartBox.speedStep)
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
                        const pts = PlannerController.points
                        for (let i = 0; i < pts.length; ++i) {
                            // 0 means no disk time to predict (compute-bound): no point on the speed line.
                            if (pts[i].tokensPerSecond > 0)
                                speedSeries.append(pts[i].budget / page.axisUnit, pts[i].tokensPerSecond)
                            hitSeries.append(pts[i].budget / page.axisUnit, pts[i].hitRate * 100)
                        }
                    }
                    Connections {
                        target: PlannerController
                        function onPlanChanged() { chart.fill() }
                    }
                    Component.onCompleted: fill()
                }

                // Markers and zones over the plot area, on the chart's x axis
                Item {
                    id: overlay
                    x: chart.x + chart.plotArea.x
                    y: chart.y + chart.plotArea.y
                    width: chart.plotArea.width
                    height: chart.plotArea.height
                    // The axis' own range, in bytes: the budget axis is widened to round ticks.
                    readonly property real loBytes: axisX.min * page.axisUnit
                    readonly property real hiBytes: axisX.max * page.axisUnit
                    function xOf(bytes) {
                        return hiBytes > loBytes ? (bytes - loBytes) / (hiBytes - loBytes) * width : 0
                    }

                    // Below the floor: refused
                    Rectangle {
                        x: 0
                        width: Math.max(0, overlay.xOf(PlannerController.floorBytes))
                        height: parent.height
                        color: Theme.surfaceAlt
                        opacity: 0.8
                        Label {
                            anchors.centerIn: parent
                            rotation: -90
                            text: qsTr("refused")
                            color: Theme.textMuted
                            font.pixelSize: Theme.fontSmall
                            visible: parent.width > 14
                        }
                    }
                    // Past the cliff: danger zone (what it means is said under the chart).
                    Rectangle {
                        objectName: "cliffZone"
                        readonly property real start: Math.max(0, overlay.xOf(PlannerController.cliffBytes))
                        visible: PlannerController.cliffBytes > 0 && start < overlay.width
                        x: start
                        width: Math.max(0, overlay.width - start)
                        height: parent.height
                        color: Theme.dangerZone
                    }

                    FontMetrics { id: markMetrics; font.pixelSize: Theme.fontSmall }
                    // The marked budgets, each with a short name beside its line. Names go right of
                    // the line (left of it at the plot's right edge), on the first row from the top
                    // where they meet no other name, so no two ever overlap.
                    readonly property real markPad: 2
                    readonly property real markRowHeight: markMetrics.height + 2 * markPad + 1
                    readonly property var marks: {
                        const lo = overlay.loBytes, hi = overlay.hiBytes
                        const all = [
                            { name: qsTr("floor"), bytes: PlannerController.floorBytes, color: Theme.text },
                            { name: qsTr("default"), bytes: PlannerController.defaultBytes, color: Theme.accent },
                            { name: qsTr("paging cliff %1").arg(Units.bytes(PlannerController.cliffBytes)),
                              bytes: PlannerController.cliffBytes > 0 ? PlannerController.cliffBytes : -1, color: Theme.danger },
                            { name: qsTr("7/8 RAM"), bytes: PlannerController.capBytes, color: Theme.warning },
                            { name: qsTr("other programs %1").arg(Units.bytes(PlannerController.otherBytes)),
                              bytes: PlannerController.physicalBytes - PlannerController.otherBytes, color: Theme.textMuted }
                        ].filter(m => m.bytes >= lo && m.bytes <= hi)
                        all.sort((a, b) => a.bytes - b.bytes)
                        const rows = [] // per row, the [left, right] spans already taken
                        const gap = 4
                        for (const m of all) {
                            m.lineX = overlay.xOf(m.bytes)
                            m.w = Math.ceil(markMetrics.advanceWidth(m.name)) + 2 * overlay.markPad
                            m.left = m.lineX + gap
                            if (m.left + m.w > overlay.width)
                                m.left = Math.max(0, m.lineX - gap - m.w)
                            let row = 0
                            while (rows[row] && rows[row].some(s => m.left < s[1] + gap && s[0] < m.left + m.w + gap))
                                ++row
                            if (!rows[row])
                                rows[row] = []
                            rows[row].push([m.left, m.left + m.w])
                            m.row = row
                        }
                        return all
                    }
                    Repeater {
                        model: overlay.marks
                        delegate: Rectangle {
                            required property var modelData
                            x: modelData.lineX
                            width: 1.5
                            height: overlay.height
                            color: modelData.color
                            opacity: 0.8
                        }
                    }
                    // The chosen budget
                    Rectangle {
                        x: overlay.xOf(PlannerController.budget) - 1
                        width: 2
                        height: parent.height
                        color: PlannerController.budgetLevel === 2 ? Theme.danger : Theme.accent
                    }
                    // The names over every line, the chosen budget's included.
                    Repeater {
                        model: overlay.marks
                        delegate: Label {
                            required property var modelData
                            objectName: "chartMark"
                            x: modelData.left + overlay.markPad
                            y: overlay.markPad + modelData.row * overlay.markRowHeight
                            text: modelData.name
                            color: modelData.color
                            font.pixelSize: Theme.fontSmall
                            // See-through enough that a curve behind a name still shows.
                            Rectangle {
                                anchors.fill: parent
                                anchors.margins: -overlay.markPad
                                z: -1
                                radius: 2
                                color: Theme.background
                                opacity: 0.75
                            }
                        }
                    }
                }
            }

            // The cliff in words: what happens past it, or that this model never gets near it.
            Label {
                objectName: "cliffText"
                Layout.fillWidth: true
                visible: text !== ""
                wrapMode: Text.WordWrap
                color: PlannerController.cliffInRange ? Theme.danger : Theme.textMuted
                font.pixelSize: Theme.fontSmall
                text: PlannerController.cliffText
            }

            // The slider on the same axis, and what the choice means
            ColumnLayout {
                Layout.fillWidth: true
                spacing: Theme.unit
                Item {
                    Layout.fillWidth: true
                    implicitHeight: budgetSlider.implicitHeight
                    Slider {
                        id: budgetSlider
                        objectName: "budgetSlider"
                        // The handle's height is enough: the chart gets the rest.
                        topPadding: 0
                        bottomPadding: 0
                        x: chart.plotArea.x - leftPadding
                        width: chart.plotArea.width + leftPadding + rightPadding
                        from: axisX.min
                        to: Math.max(from + 0.1, axisX.max)
                        stepSize: page.inMiB ? 0.05 : 0.25
                        value: PlannerController.budget / page.axisUnit
                        Accessible.name: qsTr("RAM budget, %1").arg(Units.bytes(PlannerController.budget))
                        onMoved: PlannerController.budget = Math.round(value * page.axisUnit)
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: Theme.spacing
                    Label {
                        text: qsTr("Budget %1").arg(Units.bytes(PlannerController.budget))
                        font.bold: true
                        font.pixelSize: Theme.fontLarge
                        color: Theme.text
                    }
                    Label {
                        objectName: "budgetSentence"
                        Layout.fillWidth: true
                        text: (PlannerController.budgetLevel === 2 ? "⚠ " : PlannerController.budgetLevel === 1 ? "⚠ " : "")
                              + PlannerController.budgetSentence
                        wrapMode: Text.WordWrap
                        color: PlannerController.budgetLevel === 2 ? Theme.danger
                               : PlannerController.budgetLevel === 1 ? Theme.warning : Theme.text
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: Theme.spacing
                    Label {
                        objectName: "savedBudgetText"
                        Layout.fillWidth: true
                        text: PlannerController.reopening
                              ? qsTr("Re-opening the model at %1…").arg(Units.bytes(PlannerController.budget))
                              : PlannerController.savedBudgetText
                        wrapMode: Text.WordWrap
                        color: PlannerController.savedBudgetBytes > 0 && PlannerController.savedBudgetBytes < PlannerController.floorBytes
                               ? Theme.danger : Theme.textMuted
                        font.pixelSize: Theme.fontSmall
                    }
                    ProgressBar {
                        objectName: "reopenProgress"
                        visible: PlannerController.reopening
                        from: 0; to: 1
                        value: EngineController.loadProgress
                        Layout.preferredWidth: 120
                        Accessible.name: qsTr("Re-opening the model")
                    }
                    Button {
                        text: qsTr("Default")
                        flat: true
                        Accessible.name: qsTr("Go back to the engine's default budget")
                        onClicked: PlannerController.useDefaultBudget()
                    }
                    Button {
                        objectName: "applyBudgetButton"
                        text: PlannerController.budgetApplied ? qsTr("Applied") : qsTr("Use this budget")
                        highlighted: !PlannerController.budgetApplied
                        enabled: !PlannerController.budgetApplied && !PlannerController.reopening
                                 && PlannerController.budget >= PlannerController.floorBytes
                        Accessible.name: qsTr("Keep this budget for this model; an open model re-opens with it")
                        onClicked: PlannerController.applyBudget()
                    }
                }
                // Where the prediction's disk and compute figures come from: wraps in full.
                Label {
                    objectName: "measureText"
                    Layout.fillWidth: true
                    text: PlannerController.diskText + " " + PlannerController.computeText
                    wrapMode: Text.WordWrap
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                }
                // Part of the compute calibration could not be measured: the speeds above lean
                // on the kernels alone, and the reader should know before trusting them.
                Label {
                    objectName: "computeWarning"
                    Layout.fillWidth: true
                    visible: text.length > 0
                    text: PlannerController.computeWarning
                    wrapMode: Text.WordWrap
                    color: Theme.warning
                    font.pixelSize: Theme.fontSmall
                }
            }
        }
    }
}
