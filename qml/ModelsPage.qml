// Models: get a model (downloads) and the local library.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    title: qsTr("Models")
    subtitle: qsTr("Download a model, or open a container you already have")

    ColumnLayout {
        anchors.fill: parent
        spacing: Theme.spacing
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            text: EngineController.modelName
                  ? qsTr("Open now: %1 (%2, %3 layers, %4 experts, top-%5).")
                        .arg(EngineController.modelName)
                        .arg(EngineController.modelInfo.arch || "")
                        .arg(EngineController.modelInfo.layers || 0)
                        .arg(EngineController.modelInfo.experts || 0)
                        .arg(EngineController.modelInfo.topK || 0)
                  : qsTr("No model is open yet.")
        }
        Item { Layout.fillHeight: true }
    }
}
