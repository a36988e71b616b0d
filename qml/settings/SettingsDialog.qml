// App settings: theme, font size, model folder, the hub's address, default budget and context. Saved at once
// (QSettings); the budget and context apply when a model is next opened.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Dialog {
    id: dialog
    objectName: "settingsDialog"
    title: qsTr("Settings")
    modal: true
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(520, parent ? parent.width - 64 : 520)
    standardButtons: Dialog.Close

    GridLayout {
        width: parent.width
        columns: 2
        columnSpacing: Theme.padding
        rowSpacing: Theme.spacing

        Label { text: qsTr("Theme"); color: Theme.text }
        ComboBox {
            id: themeBox
            objectName: "themeBox"
            Layout.fillWidth: true
            readonly property var values: ["system", "light", "dark"]
            model: [qsTr("Follow the system"), qsTr("Light"), qsTr("Dark")]
            currentIndex: Math.max(0, values.indexOf(AppSettings.theme))
            Accessible.name: qsTr("Theme")
            onActivated: (i) => AppSettings.theme = values[i]
        }

        Label { text: qsTr("Text size"); color: Theme.text }
        RowLayout {
            Slider {
                id: fontSlider
                Layout.fillWidth: true
                from: 11; to: 22; stepSize: 1
                value: AppSettings.fontSize
                Accessible.name: qsTr("Text size, %1 pixels").arg(value)
                onMoved: AppSettings.fontSize = value
            }
            Label { text: AppSettings.fontSize + " px"; color: Theme.textMuted; font.family: Theme.monoFamily }
        }

        Label { text: qsTr("Models folder"); color: Theme.text }
        RowLayout {
            TextField {
                Layout.fillWidth: true
                Layout.preferredWidth: 200
                text: AppSettings.modelsFolder
                font.family: Theme.monoFamily
                Accessible.name: qsTr("Models folder")
                onEditingFinished: AppSettings.modelsFolder = text
            }
            Button {
                text: qsTr("Choose…")
                Accessible.name: qsTr("Choose the models folder")
                onClicked: folderDialog.open()
            }
        }

        // The hub: HF_ENDPOINT (a mirror, a company proxy) shown where a person can see and
        // change it; a saved address wins over the environment, an empty field gives it back.
        Label { text: qsTr("Hub address"); color: Theme.text }
        TextField {
            id: endpointField
            objectName: "endpointField"
            Layout.fillWidth: true
            text: DownloadManager.endpoint
            placeholderText: DownloadManager.effectiveEndpoint
            font.family: Theme.monoFamily
            selectByMouse: true
            Accessible.name: qsTr("Hub address, now %1").arg(DownloadManager.effectiveEndpoint)
            onEditingFinished: DownloadManager.endpoint = text
        }
        Item { width: 1; height: 1 }
        Label {
            objectName: "endpointSource"
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
            text: DownloadManager.endpointSource === "HF_ENDPOINT"
                  ? qsTr("Now %1, from the HF_ENDPOINT environment variable. An address typed here is used instead.").arg(DownloadManager.effectiveEndpoint)
                  : DownloadManager.endpointSource === "settings"
                    ? qsTr("Now %1, saved here. Empty the field to use %2.").arg(DownloadManager.effectiveEndpoint)
                      .arg(qsTr("HF_ENDPOINT or the public hub"))
                    : qsTr("Now the public hub, %1. Type a mirror's address to use it instead.").arg(DownloadManager.effectiveEndpoint)
        }

        Label { text: qsTr("RAM budget"); color: Theme.text }
        Label {
            Layout.fillWidth: true
            text: qsTr("Each model keeps its own; a model without one gets the engine's default.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
        }
        Item { width: 1; height: 1 }
        Label {
            Layout.fillWidth: true
            text: qsTr("Choose the budget on the Planner page, where the chart shows what each choice means.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
        }

        // Tools for the chat from MCP servers: a summary here, the list in its own dialog.
        Label { text: qsTr("Tools (MCP)"); color: Theme.text }
        RowLayout {
            Label {
                objectName: "mcpSummary"
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                text: McpHub.servers.length === 0 ? qsTr("No MCP server")
                      : (McpHub.servers.length === 1 ? qsTr("1 server") : qsTr("%1 servers").arg(McpHub.servers.length))
                        + " · " + (McpHub.toolNames.length === 1 ? qsTr("1 tool") : qsTr("%1 tools").arg(McpHub.toolNames.length))
            }
            Button {
                objectName: "mcpManageButton"
                text: qsTr("Servers…")
                Accessible.name: qsTr("Add or remove MCP servers")
                onClicked: mcpDialog.open()
            }
        }

        Label { text: qsTr("Prompt cache"); color: Theme.text }
        RowLayout {
            SpinBox {
                id: promptCacheBox
                objectName: "promptCacheBox"
                from: 0; to: 256
                value: AppSettings.promptCacheGiB
                editable: true
                Accessible.name: qsTr("Prompt cache on disk, %1 GiB; 0 turns it off").arg(value)
                onValueModified: AppSettings.promptCacheGiB = value
            }
            Label {
                Layout.fillWidth: true
                text: promptCacheBox.value === 0
                      ? qsTr("off: every chat reads its system prompt and tools again")
                      : qsTr("GiB on disk: a system prompt and tools already read are not read again")
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
            }
        }

        Label { text: qsTr("Data folder"); color: Theme.text }
        Label {
            Layout.fillWidth: true
            text: AppSettings.dataFolder
            elide: Text.ElideMiddle
            color: Theme.textMuted
            font.family: Theme.monoFamily
            font.pixelSize: Theme.fontSmall
        }
    }

    McpServersDialog { id: mcpDialog }

    FilePicker {
        id: folderDialog
        title: qsTr("Models folder")
        mode: FilePicker.OpenFolder
        folder: AppSettings.modelsFolder
        onAccepted: (paths) => AppSettings.modelsFolder = paths[0]
    }
}
