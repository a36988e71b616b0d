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

        RowLayout {
            Layout.fillWidth: true
            spacing: Theme.spacing
            // The title gives way (elided) before the page's actions are pushed out of the
            // window: a long model name or a large font.
            ColumnLayout {
                Layout.fillWidth: true
                spacing: 2
                Label {
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    text: frame.title
                    font.pixelSize: Theme.fontTitle
                    font.bold: true
                    color: Theme.text
                    Accessible.role: Accessible.Heading
                }
                Label {
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    visible: text !== ""
                    text: frame.subtitle
                    color: Theme.textMuted
                }
            }
            Item { Layout.fillWidth: true }
            RowLayout { id: actionRow; spacing: Theme.spacing }
        }

        Item {
            id: body
            Layout.fillWidth: true
            Layout.fillHeight: true
        }
    }
}
