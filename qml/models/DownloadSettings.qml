// Settings for downloads: files at once, a bandwidth limit, and the hub access token. A
// Flow: in a narrow window the groups wrap instead of running off the edge.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Flow {
    spacing: Theme.padding
    RowLayout {
        spacing: Theme.spacing
        Label { text: qsTr("Files at once"); color: Theme.textMuted }
        SpinBox {
            from: 1
            to: 4
            value: DownloadManager.parallelFiles
            editable: true
            Accessible.name: qsTr("Files downloaded at once")
            onValueModified: DownloadManager.parallelFiles = value
        }
    }
    RowLayout {
        spacing: Theme.spacing
        Label { text: qsTr("Limit (MiB/s, 0 = none)"); color: Theme.textMuted }
        SpinBox {
            from: 0
            to: 10000
            value: Math.round(DownloadManager.bandwidthLimit / 1048576)
            editable: true
            Accessible.name: qsTr("Bandwidth limit in MiB per second")
            onValueModified: DownloadManager.bandwidthLimit = value * 1048576
        }
    }
    RowLayout {
        spacing: Theme.spacing
        TextField {
            id: tokenField
            Layout.preferredWidth: 220
            echoMode: TextInput.Password
            placeholderText: DownloadManager.tokenSource === "HF_TOKEN" ? qsTr("token from HF_TOKEN")
                             : DownloadManager.hasToken ? qsTr("token saved") : qsTr("access token (gated models)")
            Accessible.name: qsTr("Hub access token")
            onAccepted: { DownloadManager.setAccessToken(text); text = "" }
        }
        Button {
            text: qsTr("Save token")
            enabled: tokenField.text !== ""
            Accessible.name: qsTr("Save the access token")
            onClicked: { DownloadManager.setAccessToken(tokenField.text); tokenField.text = "" }
        }
    }
}
