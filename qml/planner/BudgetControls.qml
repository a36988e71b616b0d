// Under the Planner chart: the budget slider on the chart's axis, what the chosen budget
// means in one sentence, keeping it (Default, Use this budget, the re-open's progress), and
// where the prediction's disk and compute figures come from.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ColumnLayout {
    id: controls
    // The chart's axis arithmetic and its plot area: the slider's track is the plot's width.
    required property PlannerChart axes
    required property rect plotArea

    spacing: Theme.unit
    Item {
        Layout.fillWidth: true
        implicitHeight: budgetSlider.implicitHeight
        Slider {
            id: budgetSlider
            objectName: "budgetSlider"
            // No padding: the track spans exactly the plot, under the chart's budget axis;
            // the handle's height is enough, the chart gets the rest.
            padding: 0
            x: controls.plotArea.x
            width: controls.plotArea.width
            from: controls.axes.budgetMin
            to: controls.axes.sliderMax
            stepSize: controls.axes.sliderStep
            value: controls.axes.budgetValue
            Accessible.name: qsTr("RAM budget, %1").arg(Units.bytes(PlannerController.budget))
            onMoved: PlannerController.budget = controls.axes.bytesAt(value)
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
    // Part of the compute calibration could not be measured: the speeds above lean on the
    // kernels alone, and the reader should know before trusting them.
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
