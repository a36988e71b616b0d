// The status bar: always true. Open model, budget and cache, engine state, last speed and hit rate.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: bar
    implicitHeight: 30
    color: Theme.surface
    border.color: Theme.border

    readonly property color stateColor: {
        switch (EngineController.state) {
        case EngineController.Failed: return Theme.danger
        case EngineController.Loading: return Theme.warning
        case EngineController.Ready: return EngineController.unreachable === "" ? Theme.ok : Theme.warning
        case EngineController.Generating: return Theme.ok
        default: return Theme.textMuted
        }
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: Theme.padding
        anchors.rightMargin: Theme.padding
        spacing: Theme.spacing

        Label {
            objectName: "statusModel"
            text: EngineController.modelName || qsTr("no model open")
            font.bold: EngineController.modelName !== ""
            color: Theme.text
        }
        Label { text: "·"; color: Theme.textMuted; visible: EngineController.budgetBytes > 0 }
        Label {
            visible: EngineController.budgetBytes > 0
            text: qsTr("budget %1 (cache %2)").arg(Units.bytes(EngineController.budgetBytes))
                                             .arg(Units.bytes(EngineController.expertCacheBytes))
            color: Theme.textMuted
        }
        Label { text: "·"; color: Theme.textMuted }
        Rectangle { width: 8; height: 8; radius: 4; color: bar.stateColor }
        Label {
            objectName: "statusState"
            text: EngineController.stateText
            color: EngineController.state === EngineController.Failed ? Theme.danger : Theme.text
            Accessible.name: qsTr("Engine state: %1").arg(text)
        }
        Label {
            objectName: "statusSpeed"
            visible: EngineController.lastTokensPerSecond > 0
            text: qsTr("· %1 tok/s").arg(EngineController.lastTokensPerSecond.toFixed(1))
                  + (EngineController.lastHitRate >= 0 ? qsTr(" · hit %1%").arg(Math.round(EngineController.lastHitRate * 100)) : "")
            color: Theme.textMuted
        }
        Item { Layout.fillWidth: true }
        Label {
            objectName: "statusUnreachable"
            visible: EngineController.state !== EngineController.Failed && EngineController.unreachable !== ""
            text: EngineController.unreachable
            color: Theme.warning
            elide: Text.ElideRight
            Layout.maximumWidth: bar.width / 2
        }
        Label {
            visible: EngineController.state === EngineController.Failed
            text: EngineController.errorString
            color: Theme.danger
            elide: Text.ElideRight
            Layout.maximumWidth: bar.width / 2
        }
        Label {
            objectName: "statusServer"
            visible: ApiServer.running
            text: qsTr("server :%1").arg(ApiServer.boundPort)
            color: Theme.text
            Accessible.name: qsTr("API server listening on port %1").arg(ApiServer.boundPort)
        }
    }
}
