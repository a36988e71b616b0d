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

    property alias currentPage: rail.currentIndex
    readonly property var pageNames: ["Models", "Convert", "Planner", "Chat", "Server"]

    function showPage(name) {
        const i = pageNames.indexOf(name)
        if (i >= 0) rail.currentIndex = i
    }

    Shortcut { sequence: "Ctrl+1"; onActivated: rail.currentIndex = 0 }
    Shortcut { sequence: "Ctrl+2"; onActivated: rail.currentIndex = 1 }
    Shortcut { sequence: "Ctrl+3"; onActivated: rail.currentIndex = 2 }
    Shortcut { sequence: "Ctrl+4"; onActivated: rail.currentIndex = 3 }
    Shortcut { sequence: "Ctrl+5"; onActivated: rail.currentIndex = 4 }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            NavigationRail {
                id: rail
                Layout.fillHeight: true
                pages: window.pageNames
            }

            StackLayout {
                id: pages
                objectName: "pages"
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: rail.currentIndex

                ModelsPage { objectName: "modelsPage" }
                ConvertPage { objectName: "convertPage" }
                PlannerPage { objectName: "plannerPage" }
                ChatPage { objectName: "chatPage" }
                ServerPage { objectName: "serverPage" }
            }
        }

        StatusLine {
            Layout.fillWidth: true
        }
    }
}
