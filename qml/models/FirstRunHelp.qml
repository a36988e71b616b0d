// First run, or no model open: what the demo is, and the three steps to a real model.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: help
    objectName: "firstRunHelp"
    // The first-run demo (DemoModel) is open: say what it is and how to get a real model.
    readonly property bool demoOpen: DemoModel.active

    visible: demoOpen || EngineController.modelPath === ""
    color: Theme.surfaceAlt
    radius: Theme.radius
    implicitHeight: helpColumn.implicitHeight + 2 * Theme.padding
    ColumnLayout {
        id: helpColumn
        anchors.fill: parent
        anchors.margins: Theme.padding
        spacing: Theme.unit
        Label {
            text: help.demoOpen ? qsTr("You are running the tiny demo model") : qsTr("No model is open yet")
            font.bold: true
            color: Theme.text
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.text
            text: (help.demoOpen
                   ? qsTr("The demo shows how the app works; its answers are noise. ")
                   : "")
                  + qsTr("To run a real model: 1. pick Kimi-Linear 48B below (about 98 GB) and press Download — "
                         + "it resumes after any interruption and checks every file; "
                         + "2. when it is verified, press Convert to make a streaming container (about the same size again); "
                         + "3. open the container from the library at the bottom of this page.")
        }
    }
}
