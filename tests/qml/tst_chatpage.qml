// The Chat page from the keyboard: Enter sends (refused in words without a model),
// Shift+Enter adds a line, the settings drawer opens and edits the conversation's values; a new
// chat without MCP servers shows neither the Tools button nor the model banner.
import QtQuick
import QtQuick.Controls
import QtTest
import WasteStudio
import WasteStudio.Core

Item {
    id: root
    width: 1100
    height: 720

    ChatPage { id: page; anchors.fill: parent }

    TestCase {
        name: "ChatPage"
        when: windowShown

        // A binding loop is a bug in the page, whatever the test function looks at.
        function init() { failOnWarning(/Binding loop detected/) }

        function findChild(item, name) {
            if (!item) return null
            if (item.objectName === name) return item
            const kids = item.children || []
            for (let i = 0; i < kids.length; ++i) {
                const found = findChild(kids[i], name)
                if (found) return found
            }
            if (item.contentItem && item.contentItem !== item) {
                const found = findChild(item.contentItem, name)
                if (found) return found
            }
            return null
        }

        function test_shiftEnterAddsALineAndEnterSends() {
            const composer = findChild(page, "composer")
            verify(composer, "composer")
            composer.forceActiveFocus()
            keyClick(Qt.Key_H)
            keyClick(Qt.Key_I)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            keyClick(Qt.Key_X)
            compare(composer.text, "hi\nx")
            // No model open: Enter tries to send, the text stays and the notice says why.
            keyClick(Qt.Key_Return)
            compare(composer.text, "hi\nx")
            verify(ChatController.notice.indexOf("No model is open") >= 0, ChatController.notice)
            ChatController.clearNotice()
            composer.text = ""
        }

        function test_sendButtonIsNamedAndDisabledWhenEmpty() {
            const send = findChild(page, "sendButton")
            verify(send)
            compare(send.enabled, false)
            compare(send.Accessible.name, "Send (Enter)")
            const composer = findChild(page, "composer")
            composer.text = "something"
            compare(send.enabled, true)
            composer.text = ""
        }

        // A new chat with no MCP server: no Tools button, and no banner about another model
        // (the banner's state is ChatController's enum, read here as QML reads it).
        function test_newChatShowsNoToolsButtonAndNoModelBanner() {
            ChatController.newConversation()
            compare(ChatController.modelTie, ChatController.TiedHere)
            compare(ChatController.toolServers.length, 0)
            const banner = findChild(page, "modelTieBanner")
            verify(banner, "modelTieBanner")
            compare(banner.visible, false)
            const tools = findChild(page, "chatToolsButton")
            verify(tools, "chatToolsButton")
            compare(tools.visible, false)
        }

        function test_settingsAreEditable() {
            ChatController.newConversation()
            ChatController.temperature = 0.25
            compare(ChatController.temperature, 0.25)
            ChatController.maxTokens = 300
            compare(ChatController.maxTokens, 300)
            ChatController.thinking = false
            compare(ChatController.thinking, false)
            // A new chat starts from the defaults again.
            ChatController.newConversation()
            compare(ChatController.thinking, true)
        }
    }
}
