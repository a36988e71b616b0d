// Convert: turn downloaded safetensors into a streaming container.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio

PageFrame {
    title: qsTr("Convert")
    subtitle: qsTr("Turn a downloaded model into a streaming container")
}
