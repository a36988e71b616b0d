// How much of the context the conversation (and the draft) takes, how long reading it would
// take when that is over a minute, with a warning in
// words before the start of the conversation would be left out; when the offered tools leave
// no room, the ways out as buttons: choose the tools, or a larger context.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ColumnLayout {
    id: meter
    spacing: 2
    readonly property real fraction: ChatController.contextLimit > 0
                                     ? Math.min(1, ChatController.contextUsed / ChatController.contextLimit) : 0
    readonly property bool warn: ChatController.contextWarning !== ""
    visible: ChatController.contextLimit > 0
    signal chooseTools()

    RowLayout {
        spacing: Theme.spacing
        Rectangle {
            Layout.preferredWidth: 120
            height: 6
            radius: 3
            color: Theme.surfaceAlt
            border.color: Theme.border
            Rectangle {
                width: parent.width * meter.fraction
                height: parent.height
                radius: 3
                color: meter.warn ? Theme.warning : Theme.accent
            }
        }
        Label {
            objectName: "contextMeterText"
            Layout.fillWidth: true
            // Wrapped, not cut: its explanation is what tells a person why the context is full.
            wrapMode: Text.WordWrap
            text: qsTr("%1 / %2 tokens").arg(ChatController.contextUsed.toLocaleString(Qt.locale(), 'f', 0))
                                         .arg(ChatController.contextLimit.toLocaleString(Qt.locale(), 'f', 0))
                  + (ChatController.contextNote !== "" ? " · " + ChatController.contextNote : "")
            color: meter.warn ? Theme.warning : Theme.textMuted
            font.pixelSize: Theme.fontSmall
            font.family: Theme.monoFamily
            Accessible.name: qsTr("Context used: %1").arg(text)
        }
    }
    Label {
        objectName: "readEstimate"
        Layout.fillWidth: true
        visible: ChatController.readEstimate !== "" && !meter.warn
        text: ChatController.readEstimate.charAt(0).toUpperCase() + ChatController.readEstimate.slice(1)
        wrapMode: Text.WordWrap
        color: Theme.textMuted
        font.pixelSize: Theme.fontSmall
    }
    Label {
        objectName: "contextWarning"
        Layout.fillWidth: true
        visible: meter.warn
        text: "⚠ " + ChatController.contextWarning
        wrapMode: Text.WordWrap
        color: Theme.warning
        font.pixelSize: Theme.fontSmall
    }
    RowLayout {
        visible: ChatController.toolsDoNotFit
        spacing: Theme.spacing
        Button {
            objectName: "chooseToolsButton"
            text: qsTr("Choose tools…")
            Accessible.name: qsTr("Choose which tools this chat offers")
            onClicked: meter.chooseTools()
        }
        Button {
            objectName: "largerContextButton"
            visible: ChatController.largerContext > 0
            text: qsTr("Open with a context of %1 tokens").arg(ChatController.largerContext.toLocaleString(Qt.locale(), 'f', 0))
            Accessible.name: text
            onClicked: ChatController.openWithLargerContext()
        }
    }
}
