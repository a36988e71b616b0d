// The open conversation was made with another model than the one open (ChatController.modelTie):
// it offers to open that model, or says that the model is gone and lets the person go on with
// the open one. Nothing is sent until then.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: banner
    objectName: "modelTieBanner"
    visible: ChatController.modelTie !== ChatController.TiedHere
    readonly property bool gone: ChatController.modelTie === ChatController.ModelGone
    implicitHeight: row.implicitHeight + Theme.spacing * 2
    radius: Theme.radius
    color: Theme.surface
    border.color: Theme.warning

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.margins: Theme.spacing
        Label {
            objectName: "modelTieText"
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.text
            text: banner.gone
                  ? qsTr("This chat was with %1, which is no longer on this computer.").arg(ChatController.tiedModelName)
                  : EngineController.modelName
                    ? qsTr("This chat is with %1; %2 is open.").arg(ChatController.tiedModelName).arg(EngineController.modelName)
                    : qsTr("This chat is with %1.").arg(ChatController.tiedModelName)
        }
        Button {
            objectName: "openTiedModelButton"
            visible: !banner.gone
            enabled: EngineController.state !== EngineController.Loading
            highlighted: true
            text: qsTr("Open %1").arg(ChatController.tiedModelName)
            Accessible.name: qsTr("Open %1, the model of this chat").arg(ChatController.tiedModelName)
            onClicked: ChatController.openTiedModel()
        }
        Button {
            objectName: "continueWithOpenModelButton"
            visible: EngineController.modelName !== "" && EngineController.state !== EngineController.Loading
            text: qsTr("Continue with %1").arg(EngineController.modelName)
            Accessible.name: qsTr("Continue this chat with %1").arg(EngineController.modelName)
            onClicked: ChatController.continueWithOpenModel()
        }
    }
}
