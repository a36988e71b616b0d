// One model in the library: its name, kind, size and kept budget, and Open, Convert, Show in
// folder and Delete. A delegate of ModelLibrary (its roles are the required properties).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: entry
    objectName: "libraryEntry"
    required property string name
    required property string path
    required property string kind
    required property var bytes
    required property bool canOpen
    required property bool canConvert
    required property string budgetText
    required property bool isOpen
    required property bool outside
    readonly property bool isDemo: path === DemoModel.path

    signal convertRequested()
    signal deleteRequested()

    implicitHeight: libRow.implicitHeight + Theme.spacing * 2
    color: Theme.surface
    border.color: isOpen ? Theme.accent : Theme.border
    border.width: isOpen ? 2 : 1
    radius: Theme.radius
    RowLayout {
        id: libRow
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: Theme.spacing
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 0
            Label {
                text: entry.isDemo ? qsTr("Demo model (built in)") : entry.name
                font.bold: true
                color: Theme.text
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                Layout.fillWidth: true
                elide: Text.ElideMiddle
                text: entry.kind === "remote" ? qsTr("remote engine")
                      : entry.kind + " · " + Units.bytes(entry.bytes) + (entry.budgetText !== "" ? " · " + entry.budgetText : "")
                        + (entry.outside && !entry.isDemo ? " · " + entry.path : "")
                color: entry.kind === "partial download" ? Theme.warning : Theme.textMuted
            }
        }
        Label {
            objectName: "openBadge"
            visible: entry.isOpen
            text: qsTr("● open")
            color: Theme.ok
            font.bold: true
            Accessible.name: qsTr("%1 is open").arg(entry.name)
        }
        Button {
            text: qsTr("Open")
            visible: entry.canOpen && !entry.isOpen
            Accessible.name: qsTr("Open %1").arg(entry.isDemo ? qsTr("the demo model") : entry.name)
            onClicked: EngineController.openModel(entry.path, AppSettings.budgetFor(entry.path), AppSettings.contextTokens)
        }
        Button {
            text: qsTr("Convert")
            visible: entry.canConvert
            Accessible.name: qsTr("Convert %1").arg(entry.name)
            onClicked: entry.convertRequested()
        }
        Button {
            text: qsTr("Show in folder")
            visible: entry.kind !== "remote"
            Accessible.name: qsTr("Show %1 in the file manager").arg(entry.name)
            onClicked: Qt.openUrlExternally(GuiHelpers.fileUrl(entry.path))
        }
        Button {
            text: qsTr("Delete")
            visible: !entry.outside
            Accessible.name: qsTr("Delete %1").arg(entry.name)
            onClicked: entry.deleteRequested()
        }
    }
}
