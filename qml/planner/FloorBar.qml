// The model's fixed costs at the chosen context, stacked: the floor (the least RAM it opens
// with) as trunk, attention state, scratch and the minimum expert cache, with a legend.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ColumnLayout {
    id: floorBar
    // The chosen context's name ("4K"), for the headline.
    required property string contextName

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
            text: qsTr("— the least RAM this model opens with at a %1 context").arg(floorBar.contextName)
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
                width: PlannerController.floorPartWidth(modelData.bytes, stack.width)
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
