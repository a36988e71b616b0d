// The download under way: the disk it needs, its state in words with its actions (Pause,
// Resume, Retry failed, Convert, Cancel or Clear), the total progress, why it stopped, and a
// bar for each file being downloaded or checked.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ColumnLayout {
    id: status
    readonly property int jobState: DownloadManager.state

    // Convert pressed on a finished download: its folder.
    signal convertRequested(string source)

    // Hidden with nothing to show: an empty layout would still add its spacing to the page.
    visible: DownloadManager.hasJob || DownloadManager.reason !== "" || DownloadManager.activeFiles.length > 0
    spacing: Theme.padding

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
            text: status.jobWords()
        }
        Button {
            text: qsTr("Pause")
            visible: status.jobState === Download.JobState.Running
            Accessible.name: qsTr("Pause the download (keeps the partial files)")
            onClicked: DownloadManager.pause()
        }
        Button {
            text: status.jobState === Download.JobState.Ready ? qsTr("Start") : qsTr("Resume")
            visible: status.jobState === Download.JobState.Paused || status.jobState === Download.JobState.Ready
                     || (status.jobState === Download.JobState.Failed && DownloadManager.fileCount > 0 && DownloadManager.failedFiles === 0)
            highlighted: true
            Accessible.name: text + qsTr(" the download")
            onClicked: DownloadManager.resume()
        }
        Button {
            // A job that could not even read its file list is asked for again from the start.
            readonly property bool notStarted: status.jobState === Download.JobState.Failed && DownloadManager.fileCount === 0
            objectName: "retryButton"
            text: notStarted ? qsTr("Try again") : qsTr("Retry failed")
            visible: notStarted || (DownloadManager.failedFiles > 0 && status.jobState !== Download.JobState.Running)
            Accessible.name: notStarted ? qsTr("Read the file list again and start the download")
                                        : qsTr("Retry the files that failed")
            onClicked: DownloadManager.retryFailed()
        }
        Button {
            objectName: "convertButton"
            text: qsTr("Convert")
            visible: status.jobState === Download.JobState.Done
            highlighted: true
            Accessible.name: qsTr("Convert the downloaded model into a container")
            onClicked: status.convertRequested(DownloadManager.destination)
        }
        Button {
            text: status.jobState === Download.JobState.Done ? qsTr("Clear") : qsTr("Cancel")
            Accessible.name: status.jobState === Download.JobState.Done ? qsTr("Clear the finished download from the list")
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
        indeterminate: status.jobState === Download.JobState.Listing
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
              + (status.jobState === Download.JobState.Running ? qsTr(" · %1").arg(Units.rate(DownloadManager.speed)) : "")
              + (status.jobState === Download.JobState.Running && DownloadManager.etaSeconds >= 0
                 ? qsTr(" · %1 left").arg(Units.duration(DownloadManager.etaSeconds)) : "")
              + (DownloadManager.retries > 0 ? " · " + Units.count(DownloadManager.retries, qsTr("retry"), qsTr("retries")) : "")
    }

    Label {
        objectName: "jobReason"
        Layout.fillWidth: true
        visible: DownloadManager.reason !== ""
        wrapMode: Text.WordWrap
        color: status.jobState === Download.JobState.Paused ? Theme.warning : Theme.danger
        text: DownloadManager.reason
    }

    // One bar per active file. The list is new with every progress tick, so its rows sit in a
    // Column: a Qt 6.4 layout resized between a child's deletion and its next polish reads the
    // freed child (QTBUG-111792).
    Column {
        Layout.fillWidth: true
        visible: bars.count > 0
        spacing: status.spacing
        Repeater {
            id: bars
            model: DownloadManager.activeFiles
            delegate: ColumnLayout {
                required property var modelData
                width: parent ? parent.width : 0
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
    }
}
