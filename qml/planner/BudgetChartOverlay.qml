// Over the Planner chart's plot area, on its budget axis: the refused zone below the floor,
// the zone past the paging cliff, a line and a name for each marked budget, and the chosen
// budget's line. Positions come from PlannerChart; this only draws.
import QtQuick
import QtQuick.Controls
import WasteStudio
import WasteStudio.Core

Item {
    id: overlay
    required property PlannerChart axes
    property int budgetLevel: 0 // PlannerController.budgetLevel: 2 draws the budget's line in danger
    property bool showsBudget: true

    // Below the floor: refused
    Rectangle {
        x: 0
        width: overlay.axes.refusedWidth
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
        visible: overlay.axes.cliffZoneShown
        x: overlay.axes.cliffX
        width: overlay.axes.cliffZoneWidth
        height: parent.height
        color: Theme.dangerZone
    }

    // The marked budgets' lines; their names are drawn last, over every line.
    Repeater {
        model: overlay.axes.placedMarks
        delegate: Rectangle {
            required property var modelData
            x: modelData.lineX
            width: 1.5
            height: overlay.height
            color: modelData.color
            opacity: 0.8
        }
    }
    // The chosen budget: a 2 px line centred on it.
    Item {
        visible: overlay.showsBudget
        x: overlay.axes.budgetX
        height: parent.height
        Rectangle {
            anchors.horizontalCenter: parent.horizontalCenter
            width: 2
            height: parent.height
            color: overlay.budgetLevel === 2 ? Theme.danger : Theme.accent
        }
    }
    // The names over every line, the chosen budget's included.
    Repeater {
        model: overlay.axes.placedMarks
        delegate: Label {
            required property var modelData
            objectName: "chartMark"
            x: modelData.labelX
            y: modelData.labelY
            text: modelData.name
            color: modelData.color
            font.pixelSize: Theme.fontSmall
            // See-through enough that a curve behind a name still shows.
            Rectangle {
                anchors.fill: parent
                anchors.margins: overlay.axes.markBackdropMargin
                z: -1
                radius: 2
                color: Theme.background
                opacity: 0.75
            }
        }
    }
}
