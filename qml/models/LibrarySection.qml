// The library: the models on this computer (the models folder, and containers opened from
// elsewhere), with Open a container…, Add remote engine… and Refresh, and one LibraryEntry
// for each model.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

ColumnLayout {
    id: section
    required property ModelLibrary library
    // The library is being scanned; the outcome of the last delete, in words.
    property bool scanning: false
    property string message: ""

    signal openContainerRequested()
    signal addRemoteRequested()
    signal convertRequested(string path)
    signal deleteRequested(string path, string name, var bytes)

    spacing: Theme.padding

    RowLayout {
        Layout.fillWidth: true
        Label {
            text: qsTr("On this computer")
            font.pixelSize: Theme.fontLarge
            font.bold: true
            color: Theme.text
            Accessible.role: Accessible.Heading
        }
        Label {
            Layout.fillWidth: true
            text: AppSettings.modelsFolder
            elide: Text.ElideMiddle
            color: Theme.textMuted
            font.family: Theme.monoFamily
        }
        Button {
            objectName: "openContainerButton"
            Layout.minimumWidth: implicitWidth
            text: qsTr("Open a container…")
            Accessible.name: qsTr("Open a container from any folder")
            onClicked: section.openContainerRequested()
        }
        Button {
            text: qsTr("Add remote engine…")
            Accessible.name: qsTr("Add a remote OpenAI-compatible engine to the library")
            onClicked: section.addRemoteRequested()
        }
        Button {
            text: qsTr("Refresh")
            Accessible.name: qsTr("Look for models again")
            onClicked: section.library.refresh()
        }
    }
    Label {
        Layout.fillWidth: true
        visible: section.library.count === 0
        color: Theme.textMuted
        wrapMode: Text.WordWrap
        text: section.scanning ? qsTr("Looking for models…")
                               : qsTr("No models yet — download one above. Downloads and containers in %1 appear here.").arg(AppSettings.modelsFolder)
    }
    Label {
        Layout.fillWidth: true
        visible: section.message !== ""
        wrapMode: Text.WordWrap
        color: section.message.indexOf(qsTr("Deleted")) === 0 ? Theme.ok : Theme.danger
        text: section.message
    }
    // A Column, not this layout: a scan remakes every entry, and a Qt 6.4 layout resized
    // between a child's deletion and its next polish reads the freed child (QTBUG-111792).
    Column {
        Layout.fillWidth: true
        visible: entries.count > 0
        spacing: section.spacing
        Repeater {
            id: entries
            model: section.library
            delegate: LibraryEntry {
                id: entry
                width: parent ? parent.width : 0
                onConvertRequested: section.convertRequested(entry.path)
                onDeleteRequested: section.deleteRequested(entry.path, entry.name, entry.bytes)
            }
        }
    }
}
