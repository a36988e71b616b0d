// Download from the hub: the repository and revision, Check files and Download, the preset
// releases, what the release will need on this machine (ReleasePlanCard), a refusal, and
// where the download is saved.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ColumnLayout {
    id: form
    spacing: Theme.padding
    readonly property bool jobBusy: DownloadManager.state === Download.JobState.Listing
                                    || DownloadManager.state === Download.JobState.Running

    // A preset picked: its repository in the field, and its files checked unless a job runs.
    function pickPreset(repo) {
        repoField.text = repo
        if (!form.jobBusy)
            DownloadManager.check(repo, revisionField.text)
    }

    Connections {
        target: DownloadManager
        function onRefused(message) { refusedLabel.text = message }
    }

    Label {
        text: qsTr("Download from the hub")
        font.pixelSize: Theme.fontLarge
        font.bold: true
        color: Theme.text
        Accessible.role: Accessible.Heading
    }

    RowLayout {
        Layout.fillWidth: true
        spacing: Theme.spacing
        TextField {
            id: repoField
            objectName: "repoField"
            Layout.fillWidth: true
            // Its long placeholder must not be its width: at 900 px that pushed
            // Download out of the window.
            Layout.preferredWidth: 240
            Layout.minimumWidth: 160
            placeholderText: qsTr("owner/name or a hub address, e.g. moonshotai/Kimi-Linear-48B-A3B-Instruct")
            text: DownloadManager.repo !== "" ? DownloadManager.repo : "moonshotai/Kimi-Linear-48B-A3B-Instruct"
            selectByMouse: true
            Accessible.name: qsTr("Repository")
            onAccepted: { refusedLabel.text = ""; DownloadManager.check(text, revisionField.text) }
        }
        TextField {
            id: revisionField
            Layout.preferredWidth: 110
            text: DownloadManager.revision !== "" ? DownloadManager.revision : "main"
            selectByMouse: true
            Accessible.name: qsTr("Revision")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Branch, tag or commit")
        }
        Button {
            text: qsTr("Check files")
            enabled: !form.jobBusy
            Accessible.name: qsTr("Check the files and the space needed")
            onClicked: { refusedLabel.text = ""; DownloadManager.check(repoField.text, revisionField.text) }
        }
        Button {
            objectName: "startButton"
            text: qsTr("Download")
            highlighted: true
            enabled: !form.jobBusy
            Accessible.name: qsTr("Start the download")
            onClicked: { refusedLabel.text = ""; DownloadManager.start(repoField.text, revisionField.text) }
        }
    }

    Flow {
        Layout.fillWidth: true
        spacing: Theme.spacing
        Label {
            text: qsTr("Presets:")
            color: Theme.textMuted
            height: presetRepeater.count > 0 ? 40 : implicitHeight
            verticalAlignment: Text.AlignVCenter
        }
        Repeater {
            id: presetRepeater
            model: DownloadManager.presets.filter(p => p.featured)
            delegate: Button {
                required property var modelData
                objectName: "preset" + modelData.name.replace(/[^A-Za-z0-9]/g, "")
                flat: true
                text: modelData.name + " · " + modelData.sizeText
                Accessible.name: qsTr("Preset %1, %2").arg(modelData.name).arg(modelData.sizeText)
                // Hidden once pressed (the page below changes, the pointer may not
                // move again), and after a few seconds in any case: never stuck.
                ToolTip.visible: hovered && !pressed && !form.jobBusy
                ToolTip.delay: 500
                ToolTip.timeout: 6000
                ToolTip.text: modelData.repo + " — " + modelData.note
                onClicked: form.pickPreset(modelData.repo)
            }
        }
        // The other releases the engine runs, in one list: buttons for all of them
        // took four rows of a 600 px window.
        ComboBox {
            id: morePresets
            objectName: "morePresets"
            readonly property var releases: DownloadManager.presets.filter(p => !p.featured)
            model: releases
            textRole: "label"
            displayText: qsTr("More releases…")
            currentIndex: -1
            implicitContentWidthPolicy: ComboBox.WidestText
            Accessible.name: qsTr("More releases")
            ToolTip.visible: hovered && !popup.visible
            ToolTip.delay: 500
            ToolTip.text: qsTr("DeepSeek, Kimi K2, Qwen, GLM and gpt-oss releases")
            onActivated: index => {
                form.pickPreset(releases[index].repo)
                currentIndex = -1
            }
        }
    }

    ReleasePlanCard {
        objectName: "modelsReleaseCard"
        Layout.fillWidth: true
        repo: repoField.text
        endpoint: DownloadManager.endpoint
        sourceBytes: DownloadManager.repo === DownloadManager.normalizeRepo(repoField.text) ? DownloadManager.totalBytes : 0
    }

    Label {
        id: refusedLabel
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.WordWrap
        color: Theme.danger
    }

    Label {
        Layout.fillWidth: true
        elide: Text.ElideMiddle
        color: Theme.textMuted
        font.family: Theme.monoFamily
        text: qsTr("Saves to %1").arg(DownloadManager.destination !== ""
                                      ? DownloadManager.destination
                                      : DownloadManager.defaultDestination(repoField.text))
    }
}
