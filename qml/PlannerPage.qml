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
                Layout.fillWidth: true
            }
            Button {
                Layout.alignment: Qt.AlignRight
                text: qsTr("Close")
                onClicked: releasePopup.close()
            }
        }
    }

    ColumnLayout {
        anchors.fill: parent
        visible: PlannerController.ready
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
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.minimumHeight: 140

            ChartView {
                id: chart
                objectName: "plannerChart"
                anchors.fill: parent
                antialiasing: true
                backgroundColor: "transparent"
                plotAreaColor: "transparent"
                legend.visible: true
                legend.alignment: Qt.AlignTop
                legend.labelColor: Theme.textMuted
                legend.font.pixelSize: Theme.fontSmall
                margins.top: 0; margins.bottom: 0; margins.left: 0; margins.right: 0
                Accessible.name: qsTr("Predicted tokens per second and hit rate against the RAM budget")

                ValueAxis {
                    id: axisX
                    min: PlannerController.axisMinBytes / page.axisUnit
                    max: PlannerController.axisMaxBytes / page.axisUnit
                    titleText: page.inMiB ? qsTr("budget (MiB)") : qsTr("budget (GiB)")
                    labelFormat: "%.0f"
                    tickCount: 7
                    color: Theme.border
                    gridLineColor: Theme.border
                    labelsColor: Theme.textMuted
                    labelsFont.pixelSize: Theme.fontSmall
                    titleFont.pixelSize: Theme.fontSmall
                }
                ValueAxis {
                    id: axisSpeed
                    min: 0
                    max: Math.max(0.1, PlannerController.maxTokensPerSecond * 1.15)
                    titleText: qsTr("tokens/s")
                    labelFormat: PlannerController.maxTokensPerSecond >= 10 ? "%.0f" : "%.2f"
                    tickCount: 5
                    color: Theme.border
                    gridLineColor: Theme.border
                    labelsColor: Theme.textMuted
                    labelsFont.pixelSize: Theme.fontSmall
                    titleFont.pixelSize: Theme.fontSmall
                }
                ValueAxis {
                    id: axisHit
                    min: 0
                    max: 100
                    titleText: qsTr("hit rate (%)")
                    labelFormat: "%.0f"
                    tickCount: 5
                    color: Theme.border
                    gridVisible: false
                    labelsColor: Theme.textMuted
                    labelsFont.pixelSize: Theme.fontSmall
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
                x: chart.plotArea.x
                y: chart.plotArea.y
                width: chart.plotArea.width
                height: chart.plotArea.height
                function xOf(bytes) {
                    const lo = PlannerController.axisMinBytes, hi = PlannerController.axisMaxBytes
                    return hi > lo ? (bytes - lo) / (hi - lo) * width : 0
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
                // Past the cliff: danger zone
                Rectangle {
                    objectName: "cliffZone"
                    readonly property real start: Math.max(0, overlay.xOf(PlannerController.cliffBytes))
                    visible: PlannerController.cliffBytes > 0 && start < overlay.width
                    x: start
                    width: Math.max(0, overlay.width - start)
                    height: parent.height
                    color: Theme.dangerZone
                    Label {
                        anchors.top: parent.top
                        anchors.left: parent.left
                        anchors.margins: Theme.unit
                        width: Math.max(parent.width - 2 * Theme.unit, 60)
                        text: qsTr("paging cliff %1: the OS pages the expert cache, about 8× slower").arg(Units.bytes(PlannerController.cliffBytes))
                        wrapMode: Text.WordWrap
                        color: Theme.danger
                        font.pixelSize: Theme.fontSmall
                    }
                }
                Repeater {
                    model: [
                        { name: qsTr("floor"), bytes: PlannerController.floorBytes, color: Theme.text, row: 0 },
                        { name: qsTr("default"), bytes: PlannerController.defaultBytes, color: Theme.accent, row: 1 },
                        { name: qsTr("7/8 RAM"), bytes: PlannerController.capBytes, color: Theme.warning, row: 2 },
                        { name: qsTr("other programs %1").arg(Units.bytes(PlannerController.otherBytes)),
                          bytes: PlannerController.physicalBytes - PlannerController.otherBytes, color: Theme.textMuted, row: 3 }
                    ]
                    delegate: Item {
                        required property var modelData
                        visible: modelData.bytes >= PlannerController.axisMinBytes && modelData.bytes <= PlannerController.axisMaxBytes
                        x: overlay.xOf(modelData.bytes)
                        height: overlay.height
                        Rectangle { width: 1.5; height: parent.height; color: parent.modelData.color; opacity: 0.8 }
                        Label {
                            x: 4
                            y: overlay.height - (parent.modelData.row + 1) * (font.pixelSize + 6)
                            text: parent.modelData.name
                            color: parent.modelData.color
                            font.pixelSize: Theme.fontSmall
                            Rectangle { anchors.fill: parent; anchors.margins: -2; z: -1; color: Theme.background; opacity: 0.85; radius: 2 }
                        }
                    }
                }
                // The chosen budget
                Rectangle {
                    x: overlay.xOf(PlannerController.budget) - 1
                    width: 2
                    height: parent.height
                    color: PlannerController.budgetLevel === 2 ? Theme.danger : Theme.accent
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
                    x: chart.plotArea.x - leftPadding
                    width: chart.plotArea.width + leftPadding + rightPadding
                    from: PlannerController.axisMinBytes / page.axisUnit
                    to: Math.max(from + 0.1, PlannerController.axisMaxBytes / page.axisUnit)
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
            RowLayout {
                Layout.fillWidth: true
                spacing: Theme.spacing
                Label {
                    Layout.fillWidth: true
                    text: PlannerController.diskText + " " + PlannerController.computeText
                    wrapMode: Text.WordWrap
                    maximumLineCount: 2
                    elide: Text.ElideRight
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                }
                Button {
                    objectName: "planReleaseButtonReady"
                    flat: true
                    text: qsTr("Plan a release…")
                    Accessible.name: qsTr("Plan a Hugging Face release from its config.json")
                    onClicked: releasePopup.open()
                }
                Button {
                    objectName: "recalibrateButton"
                    flat: true
                    text: PlannerController.calibrating ? qsTr("Measuring…") : qsTr("Measure compute")
                    enabled: !PlannerController.calibrating
                    Accessible.name: qsTr("Measure this machine's compute speed again")
                    onClicked: PlannerController.recalibrate()
                }
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
