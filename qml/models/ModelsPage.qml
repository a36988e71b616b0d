// Models: get a model from the hub (resumable, verified downloads) and manage the local
// library. The page holds the library and the dialogs; each section is its own file.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: qsTr("Models")
    subtitle: qsTr("Download a model, or open a container you already have")

    property string libraryMessage: ""
    property bool libraryScanning: false

    function showConvert(source) {
        const w = ApplicationWindow.window
        if (w && w.convertModel)
            w.convertModel(source)
    }

    ModelLibrary {
        id: modelLibrary
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
        function onFinished(ok, summary) { modelLibrary.refresh() }
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: scroll.availableWidth
            spacing: Theme.padding

            FirstRunHelp { Layout.fillWidth: true }
            DownloadForm { Layout.fillWidth: true }
            DownloadStatus {
                Layout.fillWidth: true
                onConvertRequested: (source) => page.showConvert(source)
            }
            DownloadFileList { Layout.fillWidth: true }
            DownloadSettings { Layout.fillWidth: true }
            LibrarySection {
                Layout.fillWidth: true
                library: modelLibrary
                scanning: page.libraryScanning
                message: page.libraryMessage
                onOpenContainerRequested: openPicker.open()
                onAddRemoteRequested: remoteDialog.open()
                onConvertRequested: (path) => page.showConvert(path)
                onDeleteRequested: (path, name, bytes) => deleteDialog.ask(path, name, bytes, modelLibrary.removeBlocker(path))
            }
            Item { Layout.preferredHeight: Theme.padding }
        }
    }

    RemoteEngineDialog {
        id: remoteDialog
        onAdded: modelLibrary.refresh()
    }

    DeleteModelDialog {
        id: deleteDialog
        onAccepted: modelLibrary.remove(targetPath)
    }
}
