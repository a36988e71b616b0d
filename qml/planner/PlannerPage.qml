// Planner: where the RAM goes, and what each budget buys. The model's fixed costs as a
// stacked bar (FloorBar), the predicted speed and hit rate against budget with the floor, the
// default, 7/8 of RAM, what other programs hold and the paging cliff marked (BudgetChart),
// and a budget slider on the same axis with one sentence saying what the choice means
// (BudgetControls).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: qsTr("Planner")
    // Short: the header row does not wrap, and the page must fit a 900x600 window.
    subtitle: PlannerController.container !== ""
              ? (EngineController.modelName || PlannerController.container.split("/").pop())
              : qsTr("RAM budget: floor, default, paging cliff")

    actions: [
        Label { text: qsTr("Context"); color: Theme.textMuted },
        ComboBox {
            objectName: "contextBox"
            Layout.preferredWidth: 96
            model: PlannerController.contextNames
            currentIndex: PlannerController.contextIndex
            Accessible.name: qsTr("Context length")
            onActivated: (i) => PlannerController.contextIndex = i
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

    ReleasePlanPopup { id: releasePopup }

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

            FloorBar {
                Layout.fillWidth: true
                contextName: PlannerController.contextNames[PlannerController.contextIndex]
            }

            BudgetChart {
                id: budgetChart
                Layout.fillWidth: true
                Layout.fillHeight: true
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

            BudgetControls {
                Layout.fillWidth: true
                axes: budgetChart.axes
                plotArea: budgetChart.plotArea
            }
        }
    }
}
