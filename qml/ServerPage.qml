// Server: the OpenAI-compatible API for other programs.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio

PageFrame {
    title: qsTr("Server")
    subtitle: qsTr("Let other programs use the open model through an OpenAI-compatible API")
}
