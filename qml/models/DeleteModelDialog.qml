// Delete a model from the library, or remove a remote engine: asks first, says what is freed,
// and only offers Close while something stands in the way (the model is open, a download goes into it).
import QtQuick
import QtQuick.Controls
import WasteStudio
import WasteStudio.Core

Dialog {
    id: deleteDialog
    property string targetPath
    property string targetName
    property var targetBytes: 0
    // Why it cannot be deleted now; empty: it can.
    property string blocker

    function ask(path, name, bytes, why) {
        targetPath = path
        targetName = name
        targetBytes = bytes
        blocker = why
        open()
    }

    anchors.centerIn: parent
    modal: true
    title: qsTr("Delete %1?").arg(targetName)
    standardButtons: blocker === "" ? (Dialog.Ok | Dialog.Cancel) : Dialog.Close
    // The text's width stated, not taken from the Label: a wrapped Label's implicitWidth
    // moves while the dialog measures it after a font change (a binding loop).
    contentWidth: 420
    Label {
        width: deleteDialog.contentWidth
        wrapMode: Text.WordWrap
        color: Theme.text
        text: deleteDialog.blocker !== ""
              ? deleteDialog.blocker
              : deleteDialog.targetPath.startsWith("remote:")
              ? qsTr("This removes the remote engine %1 and its saved key from the library. The server is not touched.").arg(deleteDialog.targetName)
              : qsTr("This deletes %1 and frees %2. It cannot be undone.")
                .arg(deleteDialog.targetPath).arg(Units.bytes(deleteDialog.targetBytes))
    }
}
