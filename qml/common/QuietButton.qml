// A small text button without a resting background (message actions, inline actions):
// it shows a surface only when hovered, pressed or focused, so rows of actions stay calm.
import QtQuick
import QtQuick.Controls
import WasteStudio

ToolButton {
    id: control
    font.pixelSize: Theme.fontSmall
    padding: 4
    horizontalPadding: 8
    contentItem: Label {
        text: control.text
        font: control.font
        color: control.enabled ? (control.hovered || control.activeFocus ? Theme.text : Theme.textMuted) : Theme.border
        horizontalAlignment: Text.AlignHCenter
        verticalAlignment: Text.AlignVCenter
    }
    background: Rectangle {
        implicitHeight: 24
        radius: Theme.radius
        color: control.down ? Theme.border : (control.hovered ? Theme.surfaceAlt : "transparent")
        border.color: control.visualFocus ? Theme.accent : "transparent"
    }
}
