// Before the download: will this release run here, and how fast? The repository's
// config.json is planned (ReleasePlanController): one line with the floor, the default and
// the speed, or what it lacks; the Planner's chart of it (floor, default, paging cliff,
// predicted speed); where the cliff lies; and a "compare machines" choice.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: card
    // The repository to plan ("owner/name" or a hub URL) and its listed download size.
    property alias repo: plan.repo
    property alias endpoint: plan.endpoint
    property alias sourceBytes: plan.sourceBytes

    implicitHeight: column.implicitHeight + 2 * Theme.spacing
    color: Theme.surface
    border.color: plan.state === ReleasePlanController.Ready && !plan.fits ? Theme.danger : Theme.border
    radius: Theme.radius
    visible: plan.repo !== ""

    ReleasePlanController { id: plan; objectName: "releasePlan" }

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: Theme.unit

        RowLayout {
            Layout.fillWidth: true
            spacing: Theme.spacing
            Label {
                objectName: "releasePlanHeadline"
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                font.bold: true
                color: plan.state === ReleasePlanController.Failed ? Theme.textMuted
                       : plan.state === ReleasePlanController.Ready && !plan.fits ? Theme.danger : Theme.text
                text: plan.state === ReleasePlanController.Fetching ? qsTr("Reading %1's config.json…").arg(plan.repo)
                      : plan.state === ReleasePlanController.Planning ? qsTr("Planning %1 for this machine…").arg(plan.repo)
                      : plan.state === ReleasePlanController.Failed ? plan.error
                      : plan.headline
                Accessible.name: text
            }
            Label { text: qsTr("Compare"); color: Theme.textMuted }
            ComboBox {
                id: compare
                objectName: "compareMachines"
                // As wide as its longest machine at the font of the moment, so no label is clipped.
                // Measured here: Qt 6.4's WidestText policies measure with the font the text had
                // before a font size change, and clip after it. 2 px more for the text field's
                // cursor and the rounding of a fractional advance.
                Layout.preferredWidth: widestMachine.advanceWidth + leftPadding + rightPadding
                                       + (contentItem ? contentItem.leftPadding + contentItem.rightPadding : 0) + 2
                TextMetrics {
                    id: widestMachine
                    font: compare.font
                    text: plan.widestMachineLabel
                }
                model: plan.machines
                textRole: "label"
                valueRole: "bytes"
                Accessible.name: qsTr("Compare machines: plan this release for another amount of RAM")
                onActivated: plan.machineRam = currentValue
            }
        }
        // The ways to store the experts side by side (VQ3R, and the release's own format). A Grid,
        // not a GridLayout: its cells are new with every plan, and a Qt 6.4 layout resized between
        // a child's deletion and its next polish reads the freed child (QTBUG-111792).
        Grid {
            objectName: "releaseLayouts"
            Layout.fillWidth: true
            visible: plan.state === ReleasePlanController.Ready && plan.layouts.length > 0
            columns: 6
            columnSpacing: Theme.padding
            rowSpacing: 2
            Repeater {
                model: [qsTr("Experts"), qsTr("Container"), qsTr("Record"), qsTr("Read per token"), qsTr("Floor"), qsTr("Default")]
                Label { required property string modelData; text: modelData; color: Theme.textMuted; font.pixelSize: Theme.fontSmall }
            }
            Repeater {
                model: plan.layoutCells // six per layout, row by row (ReleasePlanController)
                delegate: Label {
                    required property var modelData
                    objectName: modelData.name
                    text: modelData.text
                    color: Theme.text
                    font.bold: modelData.first
                    Accessible.name: text
                }
            }
        }
        // The Planner's chart for the release as Convert makes it: floor, default, the paging
        // cliff and the predicted speed along the budget, before anything is downloaded.
        BudgetChart {
            objectName: "releasePlanChart"
            Layout.fillWidth: true
            Layout.preferredHeight: 240
            visible: plan.state === ReleasePlanController.Ready && plan.chartShown
            source: plan.chart
            showsBudget: false
        }
        Label {
            objectName: "releasePlanDetails"
            Layout.fillWidth: true
            visible: plan.state === ReleasePlanController.Ready
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
            text: plan.details
        }
    }
}
