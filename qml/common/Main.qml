// The frame: navigation rail on the left, the five pages, the status bar at the bottom.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ApplicationWindow {
    id: window
    width: 1180
    height: 760
    minimumWidth: 860
    minimumHeight: 560
    visible: true
    title: EngineController.modelName ? EngineController.modelName + " — WASTE Studio" : "WASTE Studio"
    color: Theme.background
    font.pixelSize: Theme.fontBody

    // The Basic style draws every control from the palette: one place for light and dark.
    palette.window: Theme.background
    palette.windowText: Theme.text
    palette.base: Theme.surface
    palette.alternateBase: Theme.surfaceAlt
    palette.text: Theme.text
    palette.button: Theme.surfaceAlt
    palette.buttonText: Theme.text
    palette.brightText: Theme.accentText
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.dark: Theme.accent
    palette.mid: Theme.border
    palette.midlight: Theme.surfaceAlt
    // A highlighted list row (a drop-down's current or hovered item, a menu item) is drawn
    // on palette.light with palette.highlightedText: the accent, so the text stays readable.
    palette.light: Theme.accent
    palette.shadow: Theme.border
    palette.placeholderText: Theme.textMuted
    palette.toolTipBase: Theme.surface
    palette.toolTipText: Theme.text

    property alias currentPage: rail.currentIndex
    readonly property var pageNames: ["Models", "Convert", "Planner", "Chat", "Server"]

    function showPage(name) {
        const i = pageNames.indexOf(name)
        if (i >= 0) rail.currentIndex = i
    }
    // The Convert page, filled in for source (a finished download) and checked.
    function convertModel(source) {
        showPage("Convert")
        if (source !== "") convertPage.prepare(source)
    }

    Shortcut { sequence: "Ctrl+1"; onActivated: rail.currentIndex = 0 }
    Shortcut { sequence: "Ctrl+2"; onActivated: rail.currentIndex = 1 }
    Shortcut { sequence: "Ctrl+3"; onActivated: rail.currentIndex = 2 }
    Shortcut { sequence: "Ctrl+4"; onActivated: rail.currentIndex = 3 }
    Shortcut { sequence: "Ctrl+5"; onActivated: rail.currentIndex = 4 }
    Shortcut {
        sequence: "Ctrl+N"
        onActivated: { ChatController.newConversation(); window.showPage("Chat"); chatPage.focusComposer() }
    }
    // Ctrl+L: straight to the message box, from any page.
    Shortcut {
        sequence: "Ctrl+L"
        onActivated: { window.showPage("Chat"); chatPage.focusComposer() }
    }
    // Esc stops the answer wherever the focus is (dialogs and editors take Esc first).
    Shortcut {
        sequence: "Esc"
        enabled: ChatController.generating
        onActivated: ChatController.stop()
    }
    Shortcut { sequence: "Ctrl+,"; onActivated: settingsDialog.open() }

    // A control reached by Tab inside a scrolled page is scrolled into view.
    onActiveFocusItemChanged: GuiHelpers.ensureVisible(activeFocusItem)

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            NavigationRail {
                id: rail
                objectName: "navigationRail"
                Layout.fillHeight: true
                pages: window.pageNames
                onSettingsRequested: settingsDialog.open()
            }

            StackLayout {
                id: pages
                objectName: "pages"
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: rail.currentIndex

                ModelsPage { objectName: "modelsPage" }
                ConvertPage { id: convertPage; objectName: "convertPage" }
                PlannerPage { objectName: "plannerPage" }
                ChatPage {
                    id: chatPage
                    objectName: "chatPage"
                    onShowModels: window.showPage("Models")
                }
                ServerPage { objectName: "serverPage" }
            }
        }

        StatusLine {
            Layout.fillWidth: true
        }
    }

    // Files dropped anywhere on the window are attachments for the chat.
    DropArea {
        id: drop
        objectName: "windowDropArea"
        anchors.fill: parent
        keys: ["text/uri-list"]
        onEntered: (drag) => drag.accept(Qt.CopyAction)
        onDropped: (drop) => {
            if (drop.hasUrls) {
                window.showPage("Chat")
                ChatController.addAttachments(drop.urls)
                drop.accept(Qt.CopyAction)
            }
        }
        Rectangle {
            anchors.fill: parent
            anchors.margins: Theme.spacing
            visible: drop.containsDrag
            radius: Theme.radius * 2
            color: Theme.dropZone
            border.color: Theme.accent
            border.width: 2
            Label {
                anchors.centerIn: parent
                text: EngineController.modelName && !EngineController.hasVision
                      ? qsTr("%1 cannot read images").arg(EngineController.modelName)
                      : qsTr("Drop images to attach them to your message")
                font.pixelSize: Theme.fontTitle
                color: Theme.text
            }
        }
    }

    SettingsDialog {
        id: settingsDialog
    }

    // Above the pages and the dialogs (the overlay), so it frames a control in either.
    FocusRing {
        parent: Overlay.overlay
        target: window.activeFocusItem
    }
}
