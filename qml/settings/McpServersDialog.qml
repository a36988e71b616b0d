// The MCP servers whose tools the chat offers to the model: each with its state (connecting,
// ready with its tool count, or why it failed), Reconnect and Remove; below, a form to add
// one: a command the app starts (stdio) or the URL of a streamable-HTTP server. The list is
// kept in the settings (McpHub).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Dialog {
    id: dialog
    objectName: "mcpServersDialog"
    title: qsTr("Tools from MCP servers")
    modal: true
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(600, parent ? parent.width - 64 : 600)
    height: Math.min(implicitHeight, parent ? parent.height - 48 : implicitHeight)
    standardButtons: Dialog.Close

    onOpened: { problem.text = ""; nameField.forceActiveFocus() }

    ColumnLayout {
        anchors.fill: parent
        spacing: Theme.spacing

        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            text: qsTr("The chat offers these servers' tools to the model. Each call asks for your approval first.")
        }

        ListView {
            id: list
            objectName: "mcpServerList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.preferredHeight: Math.max(48, Math.min(contentHeight, 220))
            clip: true
            spacing: Theme.unit
            model: McpHub.servers
            Accessible.role: Accessible.List
            Accessible.name: qsTr("MCP servers")
            ScrollBar.vertical: ScrollBar { }
            delegate: Rectangle {
                id: entry
                required property var modelData
                width: ListView.view.width
                implicitHeight: entryRow.implicitHeight + 2 * Theme.spacing
                radius: Theme.radius
                color: Theme.surfaceAlt
                RowLayout {
                    id: entryRow
                    anchors.fill: parent
                    anchors.margins: Theme.spacing
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 2
                        Label {
                            text: entry.modelData.name
                            font.bold: true
                            color: Theme.text
                        }
                        Label {
                            Layout.fillWidth: true
                            text: entry.modelData.address
                            elide: Text.ElideMiddle
                            color: Theme.textMuted
                            font.family: Theme.monoFamily
                            font.pixelSize: Theme.fontSmall
                        }
                        Label {
                            objectName: "mcpServerState"
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            font.pixelSize: Theme.fontSmall
                            color: entry.modelData.state === "failed" ? Theme.danger
                                 : entry.modelData.state === "ready" ? Theme.ok : Theme.textMuted
                            text: entry.modelData.state === "ready"
                                  ? (entry.modelData.tools === 1 ? qsTr("Connected · 1 tool")
                                                                 : qsTr("Connected · %1 tools").arg(entry.modelData.tools))
                                  : entry.modelData.state === "failed" ? qsTr("Not connected: %1").arg(entry.modelData.message)
                                  : qsTr("Connecting…")
                        }
                    }
                    Button {
                        text: qsTr("Reconnect")
                        flat: true
                        Accessible.name: qsTr("Connect to %1 again").arg(entry.modelData.name)
                        onClicked: McpHub.reconnect(entry.modelData.name)
                    }
                    Button {
                        objectName: "mcpRemoveButton"
                        text: qsTr("Remove")
                        flat: true
                        Accessible.name: qsTr("Remove %1").arg(entry.modelData.name)
                        onClicked: McpHub.removeServer(entry.modelData.name)
                    }
                }
            }
            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: qsTr("No server yet.")
                color: Theme.textMuted
            }
        }

        Label {
            text: qsTr("Add a server")
            font.bold: true
            color: Theme.text
            Layout.topMargin: Theme.spacing
        }
        GridLayout {
            Layout.fillWidth: true
            columns: 2
            columnSpacing: Theme.spacing
            rowSpacing: Theme.unit
            Label { text: qsTr("Name"); color: Theme.text }
            TextField {
                id: nameField
                objectName: "mcpNameField"
                Layout.fillWidth: true
                placeholderText: qsTr("e.g. files")
                Accessible.name: qsTr("Server name")
            }
            Label { text: qsTr("Kind"); color: Theme.text }
            ComboBox {
                id: kindBox
                objectName: "mcpKindBox"
                Layout.fillWidth: true
                model: [qsTr("A command the app starts (stdio)"), qsTr("A URL (streamable HTTP)")]
                Accessible.name: qsTr("Kind of server")
            }
            Label { text: kindBox.currentIndex === 0 ? qsTr("Command") : qsTr("URL"); color: Theme.text }
            TextField {
                id: addressField
                objectName: "mcpAddressField"
                Layout.fillWidth: true
                font.family: Theme.monoFamily
                placeholderText: kindBox.currentIndex === 0 ? qsTr("e.g. npx -y @modelcontextprotocol/server-filesystem ~/notes")
                                                           : qsTr("e.g. http://127.0.0.1:3001/mcp")
                Accessible.name: kindBox.currentIndex === 0 ? qsTr("Command that starts the server") : qsTr("Server URL")
                onAccepted: addButton.clicked()
            }
        }
        RowLayout {
            Layout.fillWidth: true
            Label {
                id: problem
                objectName: "mcpProblem"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.danger
            }
            Button {
                id: addButton
                objectName: "mcpAddButton"
                text: qsTr("Add")
                highlighted: true
                Accessible.name: qsTr("Add the server")
                onClicked: {
                    problem.text = kindBox.currentIndex === 0 ? McpHub.addStdioServer(nameField.text, addressField.text)
                                                              : McpHub.addHttpServer(nameField.text, addressField.text)
                    if (problem.text === "") { nameField.text = ""; addressField.text = "" }
                }
            }
        }
    }
}
