// App settings: theme, font size, model folder, default budget and context. Saved at once
// (QSettings); the budget and context apply when a model is next opened.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Dialog {
    id: dialog
    objectName: "settingsDialog"
    title: qsTr("Settings")
    modal: true
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(520, parent ? parent.width - 64 : 520)
    standardButtons: Dialog.Close

    GridLayout {
        width: parent.width
        columns: 2
        columnSpacing: Theme.padding
        rowSpacing: Theme.spacing

        Label { text: qsTr("Theme"); color: Theme.text }
        ComboBox {
            id: themeBox
            objectName: "themeBox"
            Layout.fillWidth: true
            readonly property var values: ["system", "light", "dark"]
            model: [qsTr("Follow the system"), qsTr("Light"), qsTr("Dark")]
            currentIndex: Math.max(0, values.indexOf(AppSettings.theme))
            Accessible.name: qsTr("Theme")
            onActivated: (i) => AppSettings.theme = values[i]
        }

        Label { text: qsTr("Text size"); color: Theme.text }
        RowLayout {
            Slider {
                id: fontSlider
                Layout.fillWidth: true
                from: 11; to: 22; stepSize: 1
                value: AppSettings.fontSize
                Accessible.name: qsTr("Text size, %1 pixels").arg(value)
                onMoved: AppSettings.fontSize = value
            }
            Label { text: AppSettings.fontSize + " px"; color: Theme.textMuted; font.family: Theme.monoFamily }
        }

        Label { text: qsTr("Models folder"); color: Theme.text }
        RowLayout {
            TextField {
                Layout.fillWidth: true
                text: AppSettings.modelsFolder
                font.family: Theme.monoFamily
                Accessible.name: qsTr("Models folder")
                onEditingFinished: AppSettings.modelsFolder = text
            }
            Button {
                text: qsTr("Choose…")
                Accessible.name: qsTr("Choose the models folder")
                onClicked: folderDialog.open()
            }
        }

        Label { text: qsTr("RAM budget"); color: Theme.text }
        Label {
            Layout.fillWidth: true
            text: qsTr("Each model keeps its own; a model without one gets the engine's default.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
        }
        Item { width: 1; height: 1 }
        Label {
            Layout.fillWidth: true
            text: qsTr("Choose the budget on the Planner page, where the chart shows what each choice means.")
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
        }

        Label { text: qsTr("Data folder"); color: Theme.text }
        Label {
            Layout.fillWidth: true
            text: AppSettings.dataFolder
            elide: Text.ElideMiddle
            color: Theme.textMuted
            font.family: Theme.monoFamily
            font.pixelSize: Theme.fontSmall
        }
    }

    FolderDialog {
        id: folderDialog
        title: qsTr("Models folder")
        onAccepted: AppSettings.modelsFolder = selectedFolder.toString().replace(/^file:\/\//, "")
    }
}
