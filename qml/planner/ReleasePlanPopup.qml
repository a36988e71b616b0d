// A release planned from its config.json alone (as `waste plan --config`): the container
// with its experts as VQ3R and as the release ships them, side by side, on a chosen machine.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

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
            // The hub address set in Settings, as the Models page plans with (a mirror too).
            endpoint: DownloadManager.endpoint
            Layout.fillWidth: true
        }
        Button {
            Layout.alignment: Qt.AlignRight
            text: qsTr("Close")
            onClicked: releasePopup.close()
        }
    }
}
