// Chat: conversations with the open model.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    title: qsTr("Chat")
    subtitle: EngineController.modelName ? EngineController.modelName : qsTr("Open a model to start")
}
