// The chat's conversation list: search, new, rename, delete. Newest first.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: sidebar
    color: Theme.surface
    border.color: Theme.border
    radius: Theme.radius
    implicitWidth: 248

    function renameCurrent() {
        if (ChatController.currentId !== 0)
            renameDialog.openFor(ChatController.currentId, ChatController.currentTitle)
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: Theme.spacing

        Button {
            objectName: "newChatButton"
            Layout.fillWidth: true
            text: qsTr("New chat")
            icon.name: "document-new"
            Accessible.name: qsTr("New chat (Ctrl+N)")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Ctrl+N")
            onClicked: ChatController.newConversation()
        }

        TextField {
            id: search
            objectName: "chatSearch"
            Layout.fillWidth: true
            placeholderText: qsTr("Search chats")
            Accessible.name: qsTr("Search conversations")
            selectByMouse: true
            onTextChanged: searchDelay.restart()
            Timer { id: searchDelay; interval: 200; onTriggered: ChatController.search = search.text }
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: ChatController.conversations
            keyNavigationEnabled: true
            activeFocusOnTab: true
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Conversations")
            ScrollBar.vertical: ScrollBar { }

            delegate: ItemDelegate {
                id: row
                required property var conversationId
                required property string title
                required property string updatedText
                required property int index
                width: ListView.view.width
                highlighted: ChatController.currentId === conversationId
                Accessible.name: qsTr("Conversation %1, %2").arg(title).arg(updatedText)
                onClicked: ChatController.openConversation(conversationId)
                background: Rectangle {
                    radius: Theme.radius
                    color: row.highlighted ? Theme.surfaceAlt : (row.hovered ? Theme.background : "transparent")
                    border.color: row.activeFocus ? Theme.accent : "transparent"
                }
                contentItem: RowLayout {
                    spacing: Theme.unit
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 0
                        Label {
                            Layout.fillWidth: true
                            text: row.title
                            elide: Text.ElideRight
                            color: Theme.text
                            font.bold: row.highlighted
                        }
                        Label {
                            text: row.updatedText
                            color: Theme.textMuted
                            font.pixelSize: Theme.fontSmall
                        }
                    }
                    ToolButton {
                        text: "⋯"
                        visible: row.hovered || row.highlighted || activeFocus
                        Accessible.name: qsTr("Actions for %1").arg(row.title)
                        onClicked: rowMenu.popup()
                        Menu {
                            id: rowMenu
                            MenuItem {
                                text: qsTr("Rename…")
                                Accessible.name: qsTr("Rename %1").arg(row.title)
                                onTriggered: renameDialog.openFor(row.conversationId, row.title)
                            }
                            MenuItem {
                                text: qsTr("Delete…")
                                Accessible.name: qsTr("Delete %1").arg(row.title)
                                onTriggered: deleteDialog.openFor(row.conversationId, row.title)
                            }
                        }
                    }
                }
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - Theme.padding
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                text: ChatController.search !== "" ? qsTr("No chat mentions “%1”.").arg(ChatController.search)
                                                   : qsTr("Your chats appear here. They are saved as you go.")
            }
        }

        Label {
            Layout.fillWidth: true
            visible: ChatController.storeError !== ""
            wrapMode: Text.WordWrap
            color: Theme.danger
            font.pixelSize: Theme.fontSmall
            text: qsTr("Chats are not being saved: %1").arg(ChatController.storeError)
        }
    }

    Dialog {
        id: renameDialog
        property var conversationId: 0
        function openFor(id, title) { conversationId = id; nameField.text = title; open(); nameField.selectAll(); nameField.forceActiveFocus() }
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Rename chat")
        standardButtons: Dialog.Ok | Dialog.Cancel
        onAccepted: ChatController.renameConversation(conversationId, nameField.text)
        TextField {
            id: nameField
            width: 320
            Accessible.name: qsTr("Chat name")
            onAccepted: renameDialog.accept()
        }
    }

    Dialog {
        id: deleteDialog
        property var conversationId: 0
        property string chatTitle
        function openFor(id, title) { conversationId = id; chatTitle = title; open() }
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Delete chat?")
        standardButtons: Dialog.Ok | Dialog.Cancel
        onAccepted: ChatController.deleteConversation(conversationId)
        // The text's width stated, not taken from the Label: a wrapped Label's implicitWidth
        // moves while the dialog measures it after a font change (a binding loop).
        contentWidth: 320
        Label {
            width: deleteDialog.contentWidth
            wrapMode: Text.WordWrap
            text: qsTr("“%1” and all its messages will be deleted. This cannot be undone.").arg(deleteDialog.chatTitle)
        }
    }
}
