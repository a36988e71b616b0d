// One message of the chat. User messages sit in a tinted box on the right; answers use
// the full width: thinking (collapsed), Markdown prose, code blocks with Copy, and a small
// line of figures (tokens, tok/s, hit rate). Replies show displayText / displayThinking: the
// stored reply without the model's special tokens, which are markup, not words it wrote.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Item {
    id: view
    required property int index
    required property string role
    required property string text
    required property string thinking
    required property string displayText
    required property string displayThinking
    required property double thinkingSeconds
    required property var images
    required property int tokens
    required property double tokensPerSecond
    required property double hitRate
    required property string finishReason
    required property string error
    required property bool streaming
    required property var tool
    property bool isLast: false
    property bool editing: false

    readonly property bool isUser: role === "user"
    readonly property bool isTool: role === "tool"
    width: ListView.view ? ListView.view.width : 600
    implicitHeight: column.implicitHeight + Theme.padding

    Accessible.role: Accessible.ListItem
    Accessible.name: (isUser ? qsTr("You: ") : isTool ? qsTr("Tool result: ") : qsTr("Answer: ")) + displayText

    ColumnLayout {
        id: column
        anchors.top: parent.top
        anchors.right: view.isUser ? parent.right : undefined
        anchors.left: view.isUser ? undefined : parent.left
        width: view.isUser ? Math.min(view.width * 0.78, Math.max(userBody.implicitWidth, 200) + 2 * Theme.padding)
                           : Math.min(view.width, 860)
        spacing: Theme.unit

        // Images as thumbnails
        // Always left to right, in the order they were attached; a user's row sits at the
        // right edge by its alignment (a right-to-left Flow would reverse the order).
        Flow {
            Layout.alignment: view.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.preferredWidth: Math.min(column.width, view.images.length * (112 + Theme.unit))
            visible: view.images.length > 0
            spacing: Theme.unit
            Repeater {
                model: view.images
                delegate: Rectangle {
                    objectName: "messageImage"
                    required property string modelData
                    width: 112; height: 84
                    radius: Theme.radius
                    color: Theme.surfaceAlt
                    border.color: Theme.border
                    clip: true
                    Image {
                        anchors.fill: parent
                        anchors.margins: 1
                        source: GuiHelpers.fileUrl(parent.modelData)
                        sourceSize.width: 224
                        fillMode: Image.PreserveAspectCrop
                        asynchronous: true
                        Accessible.role: Accessible.Graphic
                        Accessible.name: qsTr("Attached image %1").arg(GuiHelpers.fileName(parent.modelData))
                    }
                }
            }
        }

        // The user's message (or its editor)
        Rectangle {
            visible: view.isUser
            Layout.fillWidth: true
            implicitHeight: (view.editing ? editor.implicitHeight + editRow.implicitHeight + Theme.spacing
                                          : userBody.implicitHeight) + 2 * Theme.spacing + 4
            radius: Theme.radius * 2
            color: Theme.surfaceAlt
            border.color: view.editing ? Theme.accent : "transparent"

            TextEdit {
                id: userBody
                visible: !view.editing
                anchors.fill: parent
                anchors.margins: Theme.spacing + 2
                anchors.leftMargin: Theme.padding
                anchors.rightMargin: Theme.padding
                text: view.text
                textFormat: TextEdit.PlainText
                wrapMode: TextEdit.Wrap
                readOnly: true
                selectByMouse: true
                color: Theme.text
                selectionColor: Theme.accent
                font.pixelSize: Theme.fontBody
                Accessible.name: qsTr("Your message")
            }
            ColumnLayout {
                visible: view.editing
                anchors.fill: parent
                anchors.margins: Theme.spacing
                TabTextArea {
                    id: editor
                    Layout.fillWidth: true
                    wrapMode: TextEdit.Wrap
                    Accessible.name: qsTr("Edit your message")
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && !(event.modifiers & Qt.ShiftModifier)) {
                            event.accepted = true
                            if (ChatController.editAndResend(view.index, editor.text)) view.editing = false
                        } else if (event.key === Qt.Key_Escape) {
                            event.accepted = true
                            view.editing = false
                        }
                    }
                }
                RowLayout {
                    id: editRow
                    Layout.alignment: Qt.AlignRight
                    Button {
                        text: qsTr("Cancel")
                        flat: true
                        Accessible.name: qsTr("Cancel editing")
                        onClicked: view.editing = false
                    }
                    Button {
                        text: qsTr("Send again")
                        highlighted: true
                        Accessible.name: qsTr("Send the edited message again")
                        onClicked: if (ChatController.editAndResend(view.index, editor.text)) view.editing = false
                    }
                }
            }
        }

        // A tool call (MCP): approval, then the result collapsed
        Loader {
            active: view.isTool
            visible: active
            Layout.fillWidth: true
            sourceComponent: ToolCallCard {
                row: view.index
                tool: view.tool
                resultText: view.text
                error: view.error
            }
        }

        // Thinking, collapsed by default
        ColumnLayout {
            visible: !view.isUser && view.displayThinking !== ""
            Layout.fillWidth: true
            spacing: Theme.unit
            ToolButton {
                id: thoughtToggle
                objectName: "thoughtToggle"
                checkable: true
                padding: 2
                text: (checked ? "▾ " : "▸ ")
                      + (view.streaming && view.displayText === ""
                         ? qsTr("Thinking… %1 s").arg(Math.round(view.thinkingSeconds))
                         : qsTr("Thought for %1 s").arg(Math.max(1, Math.round(view.thinkingSeconds))))
                font.pixelSize: Theme.fontSmall
                Accessible.name: checked ? qsTr("Hide the model's thinking") : qsTr("Show the model's thinking")
                contentItem: Label {
                    text: thoughtToggle.text
                    color: Theme.textMuted
                    font: thoughtToggle.font
                }
                background: Item { }
            }
            Label {
                objectName: "thoughtText"
                visible: thoughtToggle.checked
                Layout.fillWidth: true
                Layout.leftMargin: Theme.padding
                text: view.displayThinking
                wrapMode: Text.Wrap
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                textFormat: Text.PlainText
            }
        }

        // The answer: prose blocks as Markdown, code blocks framed with Copy. Remade with every
        // streamed token, so they sit in a Column: a Qt 6.4 layout resized between a child's
        // deletion and its next polish reads the freed child (QTBUG-111792, tst_messageview.qml).
        Column {
            Layout.fillWidth: true
            visible: blocks.count > 0
            spacing: Theme.unit
            Repeater {
                id: blocks
                model: view.isUser || view.isTool ? [] : GuiHelpers.markdownBlocks(view.displayText)
                delegate: Loader {
                    required property var modelData
                    width: parent ? parent.width : 0
                    sourceComponent: modelData.code ? codeBlock : proseBlock
                    property var block: modelData
                }
            }
        }

        Label {
            visible: !view.isUser && view.streaming && view.displayText === "" && view.displayThinking === ""
            text: ChatController.prefilling
                  ? ChatController.prefillText
                  : qsTr("Writing…")
            color: Theme.textMuted
        }

        // What went wrong, and the action that fixes it
        Label {
            visible: view.error !== "" && !view.isTool
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.danger
            text: qsTr("The answer failed: %1").arg(view.error)
        }

        // Figures and actions: a Flow, so in a narrow window the actions wrap under the
        // figures instead of running past the edge.
        Flow {
            Layout.fillWidth: true
            visible: !view.streaming && !view.isTool
            spacing: Theme.unit
            layoutDirection: view.isUser ? Qt.RightToLeft : Qt.LeftToRight
            Label {
                // Also for an answer stopped before its first token: it says "stopped".
                visible: !view.isUser && (view.tokens > 0 || view.finishReason === "cancelled"
                                          || view.finishReason === "interrupted")
                // A remote engine's answers have no hit rate here (-1): none is shown. No figures
                // for an answer that wrote nothing ("0 tokens · 0.0 tok/s" says nothing).
                readonly property string figures: view.tokens > 0
                    ? qsTr("%1 tokens · %2 tok/s").arg(view.tokens).arg(view.tokensPerSecond.toFixed(1))
                      + (view.hitRate >= 0 ? qsTr(" · hit %1%").arg(Math.round(view.hitRate * 100)) : "")
                    : ""
                readonly property string ending: view.finishReason === "cancelled" ? qsTr("stopped")
                    : view.finishReason === "interrupted" ? qsTr("cut off: the app closed before the end")
                    : view.finishReason === "length" ? qsTr("reached Max tokens")
                    : view.finishReason === "context_full" ? qsTr("context full") : ""
                text: figures + (figures !== "" && ending !== "" ? " · " : "") + ending
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                font.family: Theme.monoFamily
                Accessible.name: text
            }
            QuietButton {
                // Not on an answer with no text (one that only called a tool): nothing to copy.
                visible: view.displayText !== ""
                objectName: view.isUser ? "userCopy" : "answerCopy"
                text: qsTr("Copy")
                Accessible.name: view.isUser ? qsTr("Copy your message") : qsTr("Copy the answer")
                onClicked: GuiHelpers.copyText(view.displayText)
            }
            QuietButton {
                visible: view.isUser && !ChatController.generating
                text: qsTr("Edit")
                Accessible.name: qsTr("Edit and send again")
                onClicked: { editor.text = view.text; view.editing = true; editor.forceActiveFocus() }
            }
            QuietButton {
                // On a question left without an answer (the app closed before one began) too.
                visible: view.isLast && !ChatController.generating && !view.isTool
                objectName: "regenerate"
                text: view.isUser ? qsTr("Answer") : qsTr("Regenerate")
                Accessible.name: view.isUser ? qsTr("Answer this message") : qsTr("Answer again")
                onClicked: ChatController.regenerate()
            }
        }
    }

    Component {
        id: proseBlock
        TextEdit {
            objectName: "answerProse"
            // Created inside a Loader: the block comes from it.
            readonly property var block: parent && parent.block ? parent.block : ({ text: "", language: "" })
            text: block.text
            textFormat: TextEdit.MarkdownText
            wrapMode: TextEdit.Wrap
            readOnly: true
            selectByMouse: true
            color: Theme.text
            selectionColor: Theme.accent
            font.pixelSize: Theme.fontBody
            Accessible.role: Accessible.StaticText
            Accessible.name: block.text
            onLinkActivated: (link) => Qt.openUrlExternally(link)
        }
    }

    Component {
        id: codeBlock
        Rectangle {
            id: codeRoot
            readonly property var block: parent && parent.block ? parent.block : ({ text: "", language: "" })
            implicitHeight: codeColumn.implicitHeight + Theme.spacing * 2
            radius: Theme.radius
            color: Theme.codeBackground
            border.color: Theme.border
            ColumnLayout {
                id: codeColumn
                anchors.fill: parent
                anchors.margins: Theme.spacing
                spacing: Theme.unit
                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        text: codeRoot.block.language
                        color: Theme.textMuted
                        font.pixelSize: Theme.fontSmall
                        Layout.fillWidth: true
                    }
                    QuietButton {
                        id: copyCode
                        text: copied ? qsTr("Copied") : qsTr("Copy")
                        property bool copied: false
                        Accessible.name: qsTr("Copy this code")
                        onClicked: { GuiHelpers.copyText(codeRoot.block.text); copied = true; copiedReset.restart() }
                        Timer { id: copiedReset; interval: 1500; onTriggered: copyCode.copied = false }
                    }
                }
                TextEdit {
                    Layout.fillWidth: true
                    text: codeRoot.block.text
                    textFormat: TextEdit.PlainText
                    wrapMode: TextEdit.WrapAnywhere
                    readOnly: true
                    selectByMouse: true
                    color: Theme.text
                    selectionColor: Theme.accent
                    font.family: Theme.monoFamily
                    font.pixelSize: Theme.fontSmall + 1
                    Accessible.name: qsTr("Code: %1").arg(codeRoot.block.text)
                }
            }
        }
    }
}
