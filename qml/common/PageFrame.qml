// Common page frame: title row with page actions, then the page's content.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio

Item {
    id: frame
    property string title
    property string subtitle
    default property alias content: body.data
    property alias actions: actionRow.data

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Theme.padding * 1.5
        spacing: Theme.padding

        GridLayout {
            id: header
            Layout.fillWidth: true
            columnSpacing: Theme.spacing
            rowSpacing: Theme.unit
            // The actions sit beside the title while the title keeps its whole text, or at
            // least ten title-size characters of it (a long chat name elides there); past
            // that (a large font, a narrow window) they move to a row of their own instead of
            // squeezing the title to "P…".
            readonly property real titleNeed: Math.min(titleColumn.implicitWidth, Theme.fontTitle * 10)
            columns: titleNeed + columnSpacing + actionRow.implicitWidth <= width ? 2 : 1
            ColumnLayout {
                id: titleColumn
                Layout.fillWidth: true
                spacing: 2
                Label {
                    objectName: "pageTitle"
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    text: frame.title
                    font.pixelSize: Theme.fontTitle
                    font.bold: true
                    color: Theme.text
                    Accessible.role: Accessible.Heading
                }
                Label {
                    objectName: "pageSubtitle"
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    visible: text !== ""
                    text: frame.subtitle
                    color: Theme.textMuted
                }
            }
            RowLayout {
                id: actionRow
                objectName: "pageActions"
                Layout.alignment: header.columns === 2 ? Qt.AlignRight | Qt.AlignVCenter : Qt.AlignLeft
                spacing: Theme.spacing
            }
        }

        Item {
            id: body
            Layout.fillWidth: true
            Layout.fillHeight: true
        }
    }
}
