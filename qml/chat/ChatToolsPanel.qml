// Which MCP servers and tools this chat offers the model, with what each server's tools take
// of every prompt in tokens (counted by the engine's own rendering, ToolCost). Saved with the
// conversation; a server added later is offered until turned off here.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Drawer {
    id: panel
    objectName: "chatToolsPanel"
    edge: Qt.RightEdge
    width: Math.min(380, parent ? parent.width * 0.8 : 380)
    height: parent ? parent.height : 600
    background: Rectangle { color: Theme.surface; border.color: Theme.border }

    // Servers whose tool list is open; kept here, as every change rebuilds the rows.
    property var expandedServers: []
    function toggleExpanded(name) {
        const list = expandedServers.slice()
        const i = list.indexOf(name)
        if (i >= 0) list.splice(i, 1); else list.push(name)
        expandedServers = list
    }

    function tokensText(n) {
        return n < 0 ? qsTr("counting…") : qsTr("%1 tokens").arg(n.toLocaleString(Qt.locale(), 'f', 0))
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Theme.padding
        spacing: Theme.spacing

        Label {
            text: qsTr("Tools for this chat")
            font.pixelSize: Theme.fontLarge + 2
            font.bold: true
            color: Theme.text
            Accessible.role: Accessible.Heading
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            text: ChatController.toolServers.length === 0
                  ? qsTr("No MCP server with tools is connected. Add one in Settings → Tools.")
                  : qsTr("Every tool offered is declared in every prompt. Turn off what this chat does not need: the context keeps the room for the conversation.")
        }
        Label {
            objectName: "toolTokensTotal"
            Layout.fillWidth: true
            visible: ChatController.toolServers.length > 0
            wrapMode: Text.WordWrap
            color: Theme.text
            text: qsTr("Offered now: %1 of the %2-token context").arg(panel.tokensText(ChatController.toolTokens))
                                                             .arg(ChatController.contextLimit.toLocaleString(Qt.locale(), 'f', 0))
        }

        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            contentWidth: availableWidth
            // Columns, not layouts, around the Repeaters: the server list is new with every
            // change, and a Qt 6.4 layout resized between a child's deletion and its next
            // polish reads the freed child (QTBUG-111792).
            Column {
                width: parent.width
                spacing: Theme.spacing
                Repeater {
                    model: ChatController.toolServers
                    delegate: ColumnLayout {
                        id: server
                        required property var modelData
                        readonly property bool expanded: panel.expandedServers.indexOf(modelData.name) >= 0
                        width: parent ? parent.width : 0
                        spacing: 0
                        RowLayout {
                            Layout.fillWidth: true
                            CheckBox {
                                objectName: "toolServerSwitch"
                                Layout.fillWidth: true
                                checked: server.modelData.offered && server.modelData.offeredTools > 0
                                text: server.modelData.name
                                Accessible.name: qsTr("Offer the tools of %1 in this chat").arg(server.modelData.name)
                                onToggled: ChatController.setServerOffered(server.modelData.name, checked)
                            }
                            ToolButton {
                                objectName: "toolServerExpand"
                                text: server.expanded ? "▾" : "▸"
                                Accessible.name: server.expanded ? qsTr("Hide the tools of %1").arg(server.modelData.name)
                                                                 : qsTr("Choose among the tools of %1").arg(server.modelData.name)
                                onClicked: panel.toggleExpanded(server.modelData.name)
                            }
                        }
                        // Under the name, so a long name and the figures never push each other out.
                        Label {
                            objectName: "toolServerCost"
                            Layout.fillWidth: true
                            Layout.leftMargin: Theme.padding * 2
                            wrapMode: Text.WordWrap
                            color: Theme.textMuted
                            font.family: Theme.monoFamily
                            font.pixelSize: Theme.fontSmall
                            text: qsTr("%1 of %2 tools · %3").arg(server.modelData.offeredTools).arg(server.modelData.tools)
                                                              .arg(panel.tokensText(server.modelData.tokens))
                        }
                        Column {
                            Layout.fillWidth: true
                            visible: tools.count > 0
                            leftPadding: Theme.padding * 2
                            Repeater {
                                id: tools
                                model: server.expanded ? server.modelData.toolList : []
                                delegate: CheckBox {
                                    required property var modelData
                                    objectName: "toolSwitch"
                                    text: modelData.name
                                    checked: server.modelData.offered && modelData.offered
                                    Accessible.name: qsTr("Offer %1 in this chat").arg(modelData.name)
                                    onToggled: ChatController.setToolOffered(server.modelData.name, modelData.name, checked)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
