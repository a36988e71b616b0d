// Models: get a model from the hub (resumable, verified downloads) and manage the local library.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: qsTr("Models")
    subtitle: qsTr("Download a model, or open a container you already have")

    readonly property int jobState: DownloadManager.state
    readonly property bool jobBusy: jobState === Download.JobState.Listing || jobState === Download.JobState.Running
    // The first-run demo (DemoModel) is open: say what it is and how to get a real model.
    readonly property bool demoOpen: DemoModel.active
    property string libraryMessage: ""
    property bool libraryScanning: false

    // A preset picked: its repository in the field, and its files checked unless a job runs.
    function pickPreset(repo) {
        repoField.text = repo
        if (!page.jobBusy)
            DownloadManager.check(repo, revisionField.text)
    }

    function showConvert(source) {
        const w = ApplicationWindow.window
        if (w && w.convertModel)
            w.convertModel(source)
    }

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

    function jobWords() {
        switch (jobState) {
        case Download.JobState.Idle: return qsTr("Nothing is downloading.")
        case Download.JobState.Listing: return qsTr("Reading the file list of %1…").arg(DownloadManager.repo)
        case Download.JobState.Ready: return qsTr("%1: %2, %3. Ready to download.").arg(DownloadManager.repo)
                             .arg(Units.count(DownloadManager.fileCount, qsTr("file"), qsTr("files"))).arg(Units.bytes(DownloadManager.totalBytes))
        case Download.JobState.Running: return qsTr("Downloading %1").arg(DownloadManager.repo)
        case Download.JobState.Paused: return qsTr("Paused: %1 (the partial files are kept; Resume continues where it stopped)").arg(DownloadManager.repo)
        case Download.JobState.Done: return DownloadManager.fileCount === 1
                             ? qsTr("%1: its one file verified.").arg(DownloadManager.repo)
                             : qsTr("%1: all %2 files verified.").arg(DownloadManager.repo).arg(DownloadManager.fileCount)
        case Download.JobState.Failed: return DownloadManager.fileCount > 0
                              ? qsTr("%1: stopped, %2 of %3 failed.").arg(DownloadManager.repo).arg(DownloadManager.failedFiles)
                                    .arg(Units.count(DownloadManager.fileCount, qsTr("file"), qsTr("files")))
                              : qsTr("%1: could not start.").arg(DownloadManager.repo)
        }
        return ""
    }

    ModelLibrary {
        id: library
        folder: AppSettings.modelsFolder
        openModelPath: EngineController.modelPath
        // The demo and a container opened from elsewhere stay listed beside the folder's own.
        extraPaths: [DemoModel.path, EngineController.modelPath, AppSettings.lastModelPath].concat(AppSettings.openedContainers)
        downloadFolder: DownloadManager.unfinishedDestination
        onBusyChanged: page.libraryScanning = busy
        onRemoved: (path, bytesFreed, error) => {
            page.libraryMessage = error !== "" ? error
                                               : qsTr("Deleted %1 and freed %2.").arg(path).arg(Units.bytes(bytesFreed))
        }
    }

    // A container anywhere on disk (another drive, a colleague's share): a folder picker.
    FilePicker {
        id: openPicker
        objectName: "openContainerPicker"
        title: qsTr("Open a container (the folder with manifest.json)")
        mode: FilePicker.OpenFolder
        folder: AppSettings.modelsFolder
        onAccepted: (paths) => EngineController.openModel(paths[0], AppSettings.budgetFor(paths[0]), AppSettings.contextTokens)
    }

    Connections {
        target: DownloadManager
        function onFinished(ok, summary) { library.refresh() }
        function onRefused(message) { refusedLabel.text = message }
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: scroll.availableWidth
            spacing: Theme.padding

            // First run: what the demo is and how to get a real model.
            Rectangle {
                objectName: "firstRunHelp"
                Layout.fillWidth: true
                visible: page.demoOpen || EngineController.modelPath === ""
                color: Theme.surfaceAlt
                radius: Theme.radius
                implicitHeight: helpColumn.implicitHeight + 2 * Theme.padding
                ColumnLayout {
                    id: helpColumn
                    anchors.fill: parent
                    anchors.margins: Theme.padding
                    spacing: Theme.unit
                    Label {
                        text: page.demoOpen ? qsTr("You are running the tiny demo model") : qsTr("No model is open yet")
                        font.bold: true
                        color: Theme.text
                    }
                    Label {
                        Layout.fillWidth: true
                        wrapMode: Text.WordWrap
                        color: Theme.text
                        text: (page.demoOpen
                               ? qsTr("The demo shows how the app works; its answers are noise. ")
                               : "")
                              + qsTr("To run a real model: 1. pick Kimi-Linear 48B below (about 98 GB) and press Download — "
                                     + "it resumes after any interruption and checks every file; "
                                     + "2. when it is verified, press Convert to make a streaming container (about the same size again); "
                                     + "3. open the container from the library at the bottom of this page.")
                    }
                }
            }

            // ---- Download -------------------------------------------------------------
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
                    enabled: !page.jobBusy
                    Accessible.name: qsTr("Check the files and the space needed")
                    onClicked: { refusedLabel.text = ""; DownloadManager.check(repoField.text, revisionField.text) }
                }
                Button {
                    objectName: "startButton"
                    text: qsTr("Download")
                    highlighted: true
                    enabled: !page.jobBusy
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
                        ToolTip.visible: hovered && !pressed && !page.jobBusy
                        ToolTip.delay: 500
                        ToolTip.timeout: 6000
                        ToolTip.text: modelData.repo + " — " + modelData.note
                        onClicked: page.pickPreset(modelData.repo)
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
                    ToolTip.text: qsTr("DeepSeek, Kimi K2, Qwen3 and gpt-oss releases")
                    onActivated: index => {
                        page.pickPreset(releases[index].repo)
                        currentIndex = -1
                    }
                }
            }

            ReleasePlanCard {
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

            // The disk line: download + container against the free space of that disk.
            Label {
                objectName: "diskLine"
                Layout.fillWidth: true
                visible: DownloadManager.hasJob && DownloadManager.freeBytes >= 0 && DownloadManager.fileCount > 0
                wrapMode: Text.WordWrap
                color: DownloadManager.spaceOk ? Theme.text : Theme.danger
                text: (DownloadManager.spaceOk ? "" : qsTr("Not enough space: "))
                      + qsTr("needs %1%2; %3 free on %4")
                        .arg(Units.bytes(DownloadManager.downloadBytesNeeded))
                        .arg(DownloadManager.containerBytesNeeded > 0
                             ? (DownloadManager.containerPlanned
                                ? qsTr(" + %1 for the container (as the Convert page plans it)")
                                : qsTr(" + %1 for the container (at most about the source size)")).arg(Units.bytes(DownloadManager.containerBytesNeeded))
                             : "")
                        .arg(Units.bytes(DownloadManager.freeBytes))
                        .arg(DownloadManager.volume)
            }

            // State, actions and the total progress.
            RowLayout {
                Layout.fillWidth: true
                visible: DownloadManager.hasJob
                spacing: Theme.spacing
                Label {
                    objectName: "jobState"
                    Layout.fillWidth: true
                    wrapMode: Text.WordWrap
                    color: Theme.text
                    text: page.jobWords()
                }
                Button {
                    text: qsTr("Pause")
                    visible: page.jobState === Download.JobState.Running
                    Accessible.name: qsTr("Pause the download (keeps the partial files)")
                    onClicked: DownloadManager.pause()
                }
                Button {
                    text: page.jobState === Download.JobState.Ready ? qsTr("Start") : qsTr("Resume")
                    visible: page.jobState === Download.JobState.Paused || page.jobState === Download.JobState.Ready
                             || (page.jobState === Download.JobState.Failed && DownloadManager.fileCount > 0 && DownloadManager.failedFiles === 0)
                    highlighted: true
                    Accessible.name: text + qsTr(" the download")
                    onClicked: DownloadManager.resume()
                }
                Button {
                    text: qsTr("Retry failed")
                    visible: DownloadManager.failedFiles > 0 && page.jobState !== Download.JobState.Running
                    Accessible.name: qsTr("Retry the files that failed")
                    onClicked: DownloadManager.retryFailed()
                }
                Button {
                    objectName: "convertButton"
                    text: qsTr("Convert")
                    visible: page.jobState === Download.JobState.Done
                    highlighted: true
                    Accessible.name: qsTr("Convert the downloaded model into a container")
                    onClicked: page.showConvert(DownloadManager.destination)
                }
                Button {
                    text: page.jobState === Download.JobState.Done ? qsTr("Clear") : qsTr("Cancel")
                    Accessible.name: page.jobState === Download.JobState.Done ? qsTr("Clear the finished download from the list")
                                                              : qsTr("Cancel the download and delete its partial files")
                    onClicked: DownloadManager.cancel()
                }
            }

            ProgressBar {
                objectName: "totalProgress"
                Layout.fillWidth: true
                visible: DownloadManager.hasJob && DownloadManager.fileCount > 0
                from: 0
                to: 1
                value: DownloadManager.progress
                indeterminate: page.jobState === Download.JobState.Listing
                Accessible.name: qsTr("Total progress")
            }
            Label {
                Layout.fillWidth: true
                visible: DownloadManager.hasJob && DownloadManager.fileCount > 0
                color: Theme.textMuted
                font.family: Theme.monoFamily
                text: qsTr("%1 of %2 · %3 of %4")
                          .arg(Units.bytes(DownloadManager.doneBytes)).arg(Units.bytes(DownloadManager.totalBytes))
                          .arg(DownloadManager.doneFiles).arg(Units.count(DownloadManager.fileCount, qsTr("file"), qsTr("files")))
                      + (page.jobState === Download.JobState.Running ? qsTr(" · %1").arg(Units.rate(DownloadManager.speed)) : "")
                      + (page.jobState === Download.JobState.Running && DownloadManager.etaSeconds >= 0
                         ? qsTr(" · %1 left").arg(Units.duration(DownloadManager.etaSeconds)) : "")
                      + (DownloadManager.retries > 0 ? " · " + Units.count(DownloadManager.retries, qsTr("retry"), qsTr("retries")) : "")
            }

            Label {
                objectName: "jobReason"
                Layout.fillWidth: true
                visible: DownloadManager.reason !== ""
                wrapMode: Text.WordWrap
                color: page.jobState === Download.JobState.Paused ? Theme.warning : Theme.danger
                text: DownloadManager.reason
            }

            // One bar per active file.
            Repeater {
                model: DownloadManager.activeFiles
                delegate: ColumnLayout {
                    required property var modelData
                    Layout.fillWidth: true
                    spacing: 2
                    RowLayout {
                        Layout.fillWidth: true
                        Label {
                            Layout.fillWidth: true
                            text: modelData.path
                            elide: Text.ElideMiddle
                            font.family: Theme.monoFamily
                            color: Theme.text
                        }
                        Label {
                            color: Theme.textMuted
                            font.family: Theme.monoFamily
                            text: modelData.state === Download.FileState.Verifying
                                  ? qsTr("checking %1 of %2").arg(Units.bytes(modelData.verified)).arg(Units.bytes(modelData.size))
                                  : Units.bytes(modelData.onDisk) + " / " + Units.bytes(modelData.size)
                                    + " · " + Units.rate(modelData.speed)
                                    + (modelData.eta >= 0 ? " · " + qsTr("%1 left").arg(Units.duration(modelData.eta)) : "")
                                    + (modelData.retries > 0 ? " · " + Units.count(modelData.retries, qsTr("retry"), qsTr("retries")) : "")
                        }
                    }
                    ProgressBar {
                        Layout.fillWidth: true
                        from: 0
                        to: 1
                        value: modelData.progress
                        Accessible.name: qsTr("Progress of %1").arg(modelData.path)
                    }
                    Label {
                        Layout.fillWidth: true
                        visible: modelData.detail !== ""
                        text: modelData.detail
                        elide: Text.ElideRight
                        color: modelData.detail.indexOf("retry") === 0 ? Theme.warning : Theme.textMuted
                        font.pixelSize: Theme.fontSmall
                    }
                }
            }

            // Every file with its size and state (and the reason when it failed).
            ListView {
                id: fileList
                objectName: "fileList"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(contentHeight, 260)
                visible: count > 0
                clip: true
                model: DownloadManager.files
                keyNavigationEnabled: true
                activeFocusOnTab: true
                Accessible.name: qsTr("Files of the download")
                ScrollBar.vertical: ScrollBar {}
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
                            text: page.stateWords(fileState) + (reason !== "" && fileState !== Download.FileState.Done ? ": " + reason : "")
                            elide: Text.ElideRight
                            color: page.stateColor(fileState)
                            ToolTip.visible: reason !== "" && hoverArea.containsMouse
                            ToolTip.text: reason
                            MouseArea { id: hoverArea; anchors.fill: parent; hoverEnabled: true }
                        }
                    }
                }
            }

            // ---- Settings for downloads ------------------------------------------------
            // A Flow: in a narrow window the groups wrap instead of running off the edge.
            Flow {
                Layout.fillWidth: true
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

            // ---- Library ---------------------------------------------------------------
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("On this computer")
                    font.pixelSize: Theme.fontLarge
                    font.bold: true
                    color: Theme.text
                    Accessible.role: Accessible.Heading
                }
                Label {
                    Layout.fillWidth: true
                    text: AppSettings.modelsFolder
                    elide: Text.ElideMiddle
                    color: Theme.textMuted
                    font.family: Theme.monoFamily
                }
                Button {
                    objectName: "openContainerButton"
                    Layout.minimumWidth: implicitWidth
                    text: qsTr("Open a container…")
                    Accessible.name: qsTr("Open a container from any folder")
                    onClicked: openPicker.open()
                }
                Button {
                    text: qsTr("Add remote engine…")
                    Accessible.name: qsTr("Add a remote OpenAI-compatible engine to the library")
                    onClicked: remoteDialog.open()
                }
                Button {
                    text: qsTr("Refresh")
                    Accessible.name: qsTr("Look for models again")
                    onClicked: library.refresh()
                }
            }
            Label {
                Layout.fillWidth: true
                visible: library.count === 0
                color: Theme.textMuted
                wrapMode: Text.WordWrap
                text: page.libraryScanning ? qsTr("Looking for models…")
                                   : qsTr("No models yet — download one above. Downloads and containers in %1 appear here.").arg(AppSettings.modelsFolder)
            }
            Label {
                Layout.fillWidth: true
                visible: page.libraryMessage !== ""
                wrapMode: Text.WordWrap
                color: page.libraryMessage.indexOf(qsTr("Deleted")) === 0 ? Theme.ok : Theme.danger
                text: page.libraryMessage
            }
            Repeater {
                model: library
                delegate: Rectangle {
                    objectName: "libraryEntry"
                    required property string name
                    required property string path
                    required property string kind
                    required property var bytes
                    required property bool canOpen
                    required property bool canConvert
                    required property string budgetText
                    required property bool isOpen
                    required property bool outside
                    readonly property bool isDemo: path === DemoModel.path
                    Layout.fillWidth: true
                    implicitHeight: libRow.implicitHeight + Theme.spacing * 2
                    color: Theme.surface
                    border.color: isOpen ? Theme.accent : Theme.border
                    border.width: isOpen ? 2 : 1
                    radius: Theme.radius
                    RowLayout {
                        id: libRow
                        anchors.fill: parent
                        anchors.margins: Theme.spacing
                        spacing: Theme.spacing
                        ColumnLayout {
                            Layout.fillWidth: true
                            spacing: 0
                            Label {
                                text: isDemo ? qsTr("Demo model (built in)") : name
                                font.bold: true
                                color: Theme.text
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                Layout.fillWidth: true
                                elide: Text.ElideMiddle
                                text: kind === "remote" ? qsTr("remote engine")
                                      : kind + " · " + Units.bytes(bytes) + (budgetText !== "" ? " · " + budgetText : "")
                                        + (outside && !isDemo ? " · " + path : "")
                                color: kind === "partial download" ? Theme.warning : Theme.textMuted
                            }
                        }
                        Label {
                            objectName: "openBadge"
                            visible: isOpen
                            text: qsTr("● open")
                            color: Theme.ok
                            font.bold: true
                            Accessible.name: qsTr("%1 is open").arg(name)
                        }
                        Button {
                            text: qsTr("Open")
                            visible: canOpen && !isOpen
                            Accessible.name: qsTr("Open %1").arg(isDemo ? qsTr("the demo model") : name)
                            onClicked: EngineController.openModel(path, AppSettings.budgetFor(path), AppSettings.contextTokens)
                        }
                        Button {
                            text: qsTr("Convert")
                            visible: canConvert
                            Accessible.name: qsTr("Convert %1").arg(name)
                            onClicked: page.showConvert(path)
                        }
                        Button {
                            text: qsTr("Show in folder")
                            visible: kind !== "remote"
                            Accessible.name: qsTr("Show %1 in the file manager").arg(name)
                            onClicked: Qt.openUrlExternally(GuiHelpers.fileUrl(path))
                        }
                        Button {
                            text: qsTr("Delete")
                            visible: !outside
                            Accessible.name: qsTr("Delete %1").arg(name)
                            onClicked: {
                                deleteDialog.targetPath = path
                                deleteDialog.targetName = name
                                deleteDialog.targetBytes = bytes
                                deleteDialog.blocker = library.removeBlocker(path)
                                deleteDialog.open()
                            }
                        }
                    }
                }
            }
            Item { Layout.preferredHeight: Theme.padding }
        }
    }

    RemoteEngineDialog {
        id: remoteDialog
        onAdded: library.refresh()
    }

    Dialog {
        id: deleteDialog
        property string targetPath
        property string targetName
        property var targetBytes: 0
        property string blocker
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
        onAccepted: library.remove(targetPath)
    }
}
