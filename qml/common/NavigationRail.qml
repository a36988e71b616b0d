// The left rail: one button per page, Ctrl+1…5, readable by screen readers.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio

Rectangle {
    id: rail
    property var pages: []
    property int currentIndex: 3
    signal settingsRequested()
    // Wide enough for the wordmark and the longest page name at the chosen font size (92 px
    // at the default): at 22 px "WASTE" and "Settings" were cut at the rail's edges.
    implicitWidth: Math.max(92, Math.ceil(Math.max(wordmark.implicitWidth, longestName.width)) + 2 * Theme.padding)
    color: Theme.surface
    border.color: Theme.border

    readonly property var glyphs: ({ "Models": "⤓", "Convert": "⇄", "Planner": "▤", "Chat": "✎", "Server": "⇅" })

    TextMetrics {
        id: longestName
        font.pixelSize: Theme.fontSmall
        text: rail.pages.concat([qsTr("Settings")]).reduce((a, b) => b.length > a.length ? b : a, "")
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.topMargin: Theme.padding
        spacing: Theme.unit

        Label {
            id: wordmark
            Layout.alignment: Qt.AlignHCenter
            Layout.bottomMargin: Theme.padding
            text: "WASTE"
            font.bold: true
            font.letterSpacing: 1.5
            color: Theme.accent
        }

        // In a Column: a Repeater in a Qt 6.4 layout is a crash waiting for its model to change
        // (QTBUG-111792; tests/qml/repeaters_outside_layouts.py).
        Column {
            Layout.fillWidth: true
            leftPadding: Theme.unit
            rightPadding: Theme.unit
            spacing: Theme.unit
            Repeater {
                model: rail.pages
                delegate: ItemDelegate {
                    id: entry
                    objectName: "railEntry" + modelData
                    required property string modelData
                    required property int index
                    width: parent ? parent.width - parent.leftPadding - parent.rightPadding : 0
                    // The glyph and the name, however large the font (64 px at the default).
                    implicitHeight: Math.max(64, contentItem.implicitHeight + topPadding + bottomPadding)
                    highlighted: rail.currentIndex === index
                    focusPolicy: Qt.StrongFocus
                    Accessible.name: qsTr("%1 page (Ctrl+%2)").arg(modelData).arg(index + 1)
                    Accessible.role: Accessible.PageTab
                    onClicked: rail.currentIndex = index
                    background: Rectangle {
                        radius: Theme.radius
                        color: entry.highlighted ? Theme.surfaceAlt : "transparent"
                        border.color: entry.activeFocus ? Theme.accent : "transparent"
                    }
                    contentItem: Column {
                        spacing: 2
                        Label {
                            anchors.horizontalCenter: parent.horizontalCenter
                            text: rail.glyphs[entry.modelData] || "•"
                            font.pixelSize: Theme.fontTitle
                            color: entry.highlighted ? Theme.accent : Theme.textMuted
                        }
                        Label {
                            anchors.horizontalCenter: parent.horizontalCenter
                            text: entry.modelData
                            font.pixelSize: Theme.fontSmall
                            color: entry.highlighted ? Theme.text : Theme.textMuted
                        }
                    }
                }
            }
        }
        Item { Layout.fillHeight: true }

        ItemDelegate {
            id: settingsEntry
            objectName: "settingsButton"
            Layout.fillWidth: true
            Layout.leftMargin: Theme.unit
            Layout.rightMargin: Theme.unit
            Layout.bottomMargin: Theme.spacing
            implicitHeight: Math.max(56, contentItem.implicitHeight + topPadding + bottomPadding)
            focusPolicy: Qt.StrongFocus
            Accessible.name: qsTr("Settings (Ctrl+,)")
            onClicked: rail.settingsRequested()
            background: Rectangle {
                radius: Theme.radius
                color: settingsEntry.hovered ? Theme.surfaceAlt : "transparent"
                border.color: settingsEntry.activeFocus ? Theme.accent : "transparent"
            }
            contentItem: Column {
                spacing: 2
                Label {
                    anchors.horizontalCenter: parent.horizontalCenter
                    text: "⚙"
                    font.pixelSize: Theme.fontTitle
                    color: Theme.textMuted
                }
                Label {
                    anchors.horizontalCenter: parent.horizontalCenter
                    text: qsTr("Settings")
                    font.pixelSize: Theme.fontSmall
                    color: Theme.textMuted
                }
            }
        }
    }
}
