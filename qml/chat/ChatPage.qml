// Chat: conversations with the open model. Sidebar of chats, the messages, the composer
// (Enter sends, Shift+Enter newline, Esc stops), attachments, the context meter and the
// per-chat settings drawer.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: ChatController.currentTitle !== "" ? ChatController.currentTitle : qsTr("Chat")
    // The conversation's own model when another one is open (ModelTieBanner says which).
    subtitle: ChatController.modelTie !== ChatController.TiedHere ? qsTr("with %1").arg(ChatController.tiedModelName)
              : EngineController.modelName ? qsTr("with %1").arg(EngineController.modelName)
              : qsTr("Open a model to start")
    property alias composerText: composer.text
    signal showModels()

    function focusComposer() { composer.forceActiveFocus() }
    function send() {
        if (ChatController.send(composer.text)) {
            composer.text = ""
        }
    }

    actions: [
        QuietButton {
            text: qsTr("Rename")
            font.pixelSize: Theme.fontBody
            visible: ChatController.currentId !== 0
            Accessible.name: qsTr("Rename this chat")
            onClicked: sidebar.renameCurrent()
        },
        QuietButton {
            objectName: "chatToolsButton"
            visible: ChatController.toolServers.length > 0
            text: qsTr("Tools")
            font.pixelSize: Theme.fontBody
            Accessible.name: qsTr("Tools for this chat: which MCP servers and tools it offers, and what they cost")
            onClicked: toolsPanel.open()
        },
        QuietButton {
            objectName: "chatSettingsButton"
            text: qsTr("Chat settings")
            font.pixelSize: Theme.fontBody
            Accessible.name: qsTr("Chat settings: system prompt, temperature, top-p, max tokens, thinking")
            onClicked: settingsDrawer.open()
        }
    ]

    RowLayout {
        anchors.fill: parent
        spacing: Theme.padding

        ConversationSidebar {
            id: sidebar
            Layout.fillHeight: true
            // Narrower in a small window, so the messages keep most of the width.
            Layout.preferredWidth: Math.max(180, Math.min(248, page.width * 0.26))
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: Theme.spacing

            // The demo model is open: say what it is and where a real one comes from.
            Rectangle {
                Layout.fillWidth: true
                visible: DemoModel.active
                implicitHeight: demoRow.implicitHeight + Theme.spacing * 2
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                RowLayout {
                    id: demoRow
                    anchors.fill: parent
                    anchors.margins: Theme.spacing
                    Label {
                        Layout.fillWidth: true
                        wrapMode: Text.WordWrap
                        color: Theme.textMuted
                        text: qsTr("This is the built-in demo model: tiny and untrained, so its answers are noise. It shows how chat, streaming and the figures work. Get a real model on the Models page.")
                    }
                    Button {
                        text: qsTr("Get a model")
                        Accessible.name: qsTr("Go to the Models page to get a real model")
                        onClicked: page.showModels()
                    }
                }
            }

            ModelTieBanner {
                Layout.fillWidth: true
            }

            // A notice in words (refused attachment, no model…), dismissable
            Rectangle {
                Layout.fillWidth: true
                visible: ChatController.notice !== ""
                implicitHeight: noticeRow.implicitHeight + Theme.spacing * 2
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.warning
                RowLayout {
                    id: noticeRow
                    anchors.fill: parent
                    anchors.margins: Theme.spacing
                    Label {
                        objectName: "chatNotice"
                        Layout.fillWidth: true
                        text: "⚠ " + ChatController.notice
                        wrapMode: Text.WordWrap
                        color: Theme.text
                    }
                    Button {
                        visible: EngineController.state === EngineController.NoModel
                                 || EngineController.state === EngineController.Failed
                        text: qsTr("Go to Models")
                        Accessible.name: qsTr("Go to the Models page")
                        onClicked: page.showModels()
                    }
                    ToolButton {
                        text: "✕"
                        Accessible.name: qsTr("Dismiss the notice")
                        onClicked: ChatController.clearNotice()
                    }
                }
            }

            ListView {
                id: messages
                objectName: "messageList"
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                spacing: Theme.spacing
                model: ChatController.messages
                activeFocusOnTab: true
                Accessible.role: Accessible.List
                Accessible.name: qsTr("Messages")
                ScrollBar.vertical: ScrollBar { }
                delegate: MessageView {
                    isLast: index === messages.count - 1
                }
                // Follow the answer while it streams, unless the reader scrolled up.
                property bool follow: true
                onMovementEnded: follow = atYEnd
                onCountChanged: if (follow) Qt.callLater(positionViewAtEnd)
                // Also after the answer ends: its figures line (tokens, "stopped") appears
                // then and must not sit behind the message box.
                onContentHeightChanged: if (follow) Qt.callLater(positionViewAtEnd)
                Connections {
                    target: ChatController
                    function onCurrentChanged() { messages.follow = true; Qt.callLater(messages.positionViewAtEnd) }
                }

                // Empty states
                ColumnLayout {
                    anchors.centerIn: parent
                    width: Math.min(parent.width - 2 * Theme.padding, 460)
                    visible: messages.count === 0
                    spacing: Theme.spacing
                    Label {
                        Layout.fillWidth: true
                        horizontalAlignment: Text.AlignHCenter
                        wrapMode: Text.WordWrap
                        font.pixelSize: Theme.fontLarge + 2
                        color: Theme.text
                        text: EngineController.modelName ? qsTr("Ask %1 anything").arg(EngineController.modelName)
                              : EngineController.state === EngineController.Loading ? qsTr("Loading the model…")
                              : qsTr("No model is open")
                    }
                    Label {
                        Layout.fillWidth: true
                        horizontalAlignment: Text.AlignHCenter
                        wrapMode: Text.WordWrap
                        color: Theme.textMuted
                        text: EngineController.modelName
                              ? qsTr("Enter sends, Shift+Enter starts a new line, Esc stops the answer. Drop images on the window to attach them.")
                              : qsTr("Get a model on the Models page, or open one you already have.")
                    }
                    Button {
                        Layout.alignment: Qt.AlignHCenter
                        visible: !EngineController.modelName && EngineController.state !== EngineController.Loading
                        text: qsTr("Go to Models")
                        Accessible.name: qsTr("Go to the Models page")
                        onClicked: page.showModels()
                    }
                }
            }

            // Attachments waiting to be sent
            Flow {
                Layout.fillWidth: true
                visible: ChatController.attachments.length > 0
                spacing: Theme.spacing
                Repeater {
                    model: ChatController.attachments
                    delegate: Rectangle {
                        required property string modelData
                        required property int index
                        width: 72; height: 72
                        radius: Theme.radius
                        color: Theme.surfaceAlt
                        border.color: Theme.border
                        clip: true
                        Image {
                            anchors.fill: parent
                            anchors.margins: 1
                            source: GuiHelpers.fileUrl(parent.modelData)
                            sourceSize.width: 144
                            fillMode: Image.PreserveAspectCrop
                            asynchronous: true
                        }
                        ToolButton {
                            anchors.top: parent.top
                            anchors.right: parent.right
                            width: 24; height: 24
                            text: "✕"
                            padding: 0
                            Accessible.name: qsTr("Remove attachment %1").arg(GuiHelpers.fileName(parent.modelData))
                            onClicked: ChatController.removeAttachment(parent.index)
                        }
                    }
                }
            }

            // The composer
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: Math.min(composerScroll.implicitHeight, 180) + Theme.spacing * 2 + 4
                radius: Theme.radius * 2
                color: Theme.surface
                border.color: composer.activeFocus ? Theme.accent : Theme.border
                border.width: composer.activeFocus ? 2 : 1

                RowLayout {
                    anchors.fill: parent
                    anchors.margins: Theme.spacing
                    spacing: Theme.spacing

                    ToolButton {
                        objectName: "attachButton"
                        text: "+"
                        font.pixelSize: Theme.fontLarge + 2
                        Layout.alignment: Qt.AlignBottom
                        Accessible.name: qsTr("Attach images")
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Attach images (or drop them on the window, or paste)")
                        onClicked: fileDialog.open()
                    }
                    ScrollView {
                        id: composerScroll
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        TabTextArea {
                            id: composer
                            objectName: "composer"
                            placeholderText: ChatController.modelTie !== ChatController.TiedHere ? qsTr("Choose above how this chat goes on")
                                             : EngineController.modelName ? qsTr("Message %1").arg(EngineController.modelName)
                                             : qsTr("Open a model to chat")
                            wrapMode: TextEdit.Wrap
                            selectByMouse: true
                            background: Item { }
                            Accessible.name: qsTr("Message. Enter sends, Shift+Enter adds a line")
                            onTextChanged: draftDelay.restart()
                            Timer { id: draftDelay; interval: 300; onTriggered: ChatController.setDraft(composer.text) }
                            Keys.onPressed: (event) => {
                                if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                        && !(event.modifiers & Qt.ShiftModifier)) {
                                    event.accepted = true
                                    page.send()
                                } else if (event.matches(StandardKey.Paste) && GuiHelpers.clipboardHasImage()) {
                                    // Images (or image files) on the clipboard become attachments.
                                    const urls = GuiHelpers.clipboardImages()
                                    if (urls.length > 0) {
                                        event.accepted = true
                                        ChatController.addAttachments(urls)
                                    }
                                }
                            }
                        }
                    }
                    Button {
                        objectName: "sendButton"
                        Layout.alignment: Qt.AlignBottom
                        text: ChatController.generating ? qsTr("Stop") : qsTr("Send")
                        highlighted: !ChatController.generating
                        enabled: ChatController.generating || composer.text.trim() !== "" || ChatController.attachments.length > 0
                        Accessible.name: ChatController.generating ? qsTr("Stop the answer (Esc)") : qsTr("Send (Enter)")
                        onClicked: ChatController.generating ? ChatController.stop() : page.send()
                    }
                }
            }

            ContextMeter {
                Layout.fillWidth: true
                onChooseTools: toolsPanel.open()
            }
        }
    }

    ChatSettingsDrawer {
        id: settingsDrawer
        parent: Overlay.overlay
    }

    ChatToolsPanel {
        id: toolsPanel
        parent: Overlay.overlay
    }

    // QFileDialog underneath (FilePicker says why): a single click and Open attach that
    // file, and several files can be selected at once.
    FilePicker {
        id: fileDialog
        objectName: "attachPicker"
        title: qsTr("Attach images")
        mode: FilePicker.OpenFiles
        nameFilters: [qsTr("Images (%1)").arg(ChatController.imageFilePatterns), qsTr("All files (*)")]
        onAccepted: (paths, urls) => ChatController.addAttachments(urls)
    }
}
