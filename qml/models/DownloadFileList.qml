// Every file of the download with its size and state (and the reason when it failed).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ListView {
    id: fileList
    objectName: "fileList"
    Layout.preferredHeight: Math.min(contentHeight, 260)
    visible: count > 0
    clip: true
    model: DownloadManager.files
    keyNavigationEnabled: true
    activeFocusOnTab: true
    Accessible.name: qsTr("Files of the download")
    ScrollBar.vertical: ScrollBar {}

    function stateColor(state) {
        if (state === Download.FileState.Done) return Theme.ok
        if (state === Download.FileState.Failed) return Theme.danger
        if (state === Download.FileState.Paused) return Theme.warning
        if (state === Download.FileState.Active || state === Download.FileState.Verifying) return Theme.accent
        return Theme.textMuted
    }

    function stateWords(state) {
        switch (state) {
        case Download.FileState.Pending: return qsTr("waiting")
        case Download.FileState.Active: return qsTr("downloading")
        case Download.FileState.Verifying: return qsTr("checking")
        case Download.FileState.Done: return qsTr("verified")
        case Download.FileState.Paused: return qsTr("paused")
        case Download.FileState.Failed: return qsTr("failed")
        }
        return ""
    }

    delegate: Rectangle {
        required property int index
        required property string path
        required property var size
        required property int fileState
        required property string reason
        width: fileList.width
        implicitHeight: fileRow.implicitHeight + Theme.unit * 2
        color: index % 2 ? Theme.surface : Theme.surfaceAlt
        RowLayout {
            id: fileRow
            anchors.fill: parent
            anchors.leftMargin: Theme.spacing
            anchors.rightMargin: Theme.spacing
            spacing: Theme.spacing
            Label {
                Layout.fillWidth: true
                text: path
                elide: Text.ElideMiddle
                font.family: Theme.monoFamily
                color: Theme.text
            }
            Label {
                Layout.preferredWidth: 80
                horizontalAlignment: Text.AlignRight
                text: Units.bytes(size)
                font.family: Theme.monoFamily
                color: Theme.textMuted
            }
            Label {
                Layout.preferredWidth: 220
                text: fileList.stateWords(fileState) + (reason !== "" && fileState !== Download.FileState.Done ? ": " + reason : "")
                elide: Text.ElideRight
                color: fileList.stateColor(fileState)
                ToolTip.visible: reason !== "" && hoverArea.containsMouse
                ToolTip.text: reason
                MouseArea { id: hoverArea; anchors.fill: parent; hoverEnabled: true }
            }
        }
    }
}
