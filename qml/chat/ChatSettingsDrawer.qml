// Per-conversation settings: system prompt, sampling, answer length, thinking.
// Changes apply to the next answer and are saved with the conversation.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Drawer {
    id: drawer
    edge: Qt.RightEdge
    width: Math.min(380, parent ? parent.width * 0.8 : 380)
    height: parent ? parent.height : 600
    background: Rectangle { color: Theme.surface; border.color: Theme.border }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Theme.padding
        spacing: Theme.spacing

        Label {
            text: qsTr("Chat settings")
            font.pixelSize: Theme.fontLarge + 2
            font.bold: true
            color: Theme.text
            Accessible.role: Accessible.Heading
        }
        Label {
            Layout.fillWidth: true
            text: qsTr("For this conversation. They apply to the next answer.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
        }

        Label { text: qsTr("System prompt"); color: Theme.text; Layout.topMargin: Theme.spacing }
        ScrollView {
            Layout.fillWidth: true
            Layout.preferredHeight: 120
            TabTextArea {
                id: systemPrompt
                objectName: "systemPrompt"
                text: ChatController.systemPrompt
                wrapMode: TextEdit.Wrap
                placeholderText: qsTr("e.g. You are a careful assistant. Answer briefly.")
                Accessible.name: qsTr("System prompt")
                onEditingFinished: ChatController.systemPrompt = text
            }
        }

        RowLayout {
            Layout.topMargin: Theme.spacing
            Label { text: qsTr("Temperature"); color: Theme.text; Layout.fillWidth: true }
            Label { text: ChatController.temperature.toFixed(2); color: Theme.textMuted; font.family: Theme.monoFamily }
        }
        Slider {
            Layout.fillWidth: true
            from: 0; to: 2; stepSize: 0.05
            value: ChatController.temperature
            Accessible.name: qsTr("Temperature, %1").arg(value.toFixed(2))
            onMoved: ChatController.temperature = value
        }
        Label {
            Layout.fillWidth: true
            text: qsTr("0 always picks the likeliest word; higher is more varied.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
        }

        RowLayout {
            Label { text: qsTr("Top-p"); color: Theme.text; Layout.fillWidth: true }
            Label { text: ChatController.topP.toFixed(2); color: Theme.textMuted; font.family: Theme.monoFamily }
        }
        Slider {
            Layout.fillWidth: true
            from: 0.05; to: 1; stepSize: 0.05
            value: ChatController.topP
            Accessible.name: qsTr("Top-p, %1").arg(value.toFixed(2))
            onMoved: ChatController.topP = value
        }

        RowLayout {
            Label { text: qsTr("Max tokens per answer"); color: Theme.text; Layout.fillWidth: true }
            SpinBox {
                from: 16; to: 32768; stepSize: 128
                editable: true
                value: ChatController.maxTokens
                Accessible.name: qsTr("Max tokens per answer")
                onValueModified: ChatController.maxTokens = value
            }
        }

        RowLayout {
            Label {
                text: qsTr("Thinking")
                color: Theme.text
                Layout.fillWidth: true
            }
            Switch {
                checked: ChatController.thinking
                Accessible.name: qsTr("Let the model think before answering")
                onToggled: ChatController.thinking = checked
            }
        }
        RowLayout {
            enabled: ChatController.thinking
            Label { text: qsTr("Thinking budget (tokens, 0: no limit)"); color: Theme.text; Layout.fillWidth: true; wrapMode: Text.WordWrap }
            SpinBox {
                objectName: "thinkingBudgetBox"
                from: 0; to: 32768; stepSize: 64
                editable: true
                value: ChatController.thinkingBudget
                Accessible.name: qsTr("Most tokens the model may think before it answers; 0 for no limit")
                onValueModified: ChatController.thinkingBudget = value
            }
        }
        Label {
            Layout.fillWidth: true
            text: qsTr("Models that think (Kimi K3, DeepSeek-R1, Qwen3, gpt-oss) write their reasoning first; it is shown collapsed above the answer. At the budget the model is made to answer.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
        }
        // MCP tools (Settings → Tools): whether the model is offered them, and whether the
        // answer must start with a call (of any, or of one).
        Label { text: qsTr("Tools"); color: Theme.text; Layout.topMargin: Theme.spacing }
        ComboBox {
            id: toolBox
            objectName: "toolChoiceBox"
            Layout.fillWidth: true
            // A plain array of the names (a string list property is not one).
            readonly property var names: { let a = []; for (let i = 0; i < McpHub.toolNames.length; ++i) a.push(McpHub.toolNames[i]); return a }
            readonly property var values: ["auto", "none", "required"].concat(names)
            model: [qsTr("Offer them; the model decides"), qsTr("Do not offer them"), qsTr("Start each answer with a call")]
                   .concat(names.map(n => qsTr("Start each answer with %1").arg(n)))
            currentIndex: Math.max(0, values.indexOf(ChatController.toolChoice))
            enabled: McpHub.toolNames.length > 0
            Accessible.name: qsTr("Tools for the model")
            onActivated: (i) => ChatController.toolChoice = values[i]
        }
        Label {
            Layout.fillWidth: true
            text: McpHub.toolNames.length > 0
                  ? qsTr("Every call waits for your approval, unless you allowed that tool always.")
                  : qsTr("Add MCP servers in Settings to give the model tools.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
        }
        Item { Layout.fillHeight: true }
        Button {
            Layout.alignment: Qt.AlignRight
            text: qsTr("Close")
            Accessible.name: qsTr("Close chat settings")
            onClicked: drawer.close()
        }
    }
}
