// Add a remote engine: an OpenAI-compatible server (vLLM or SGLang across several GPUs or
// machines, a llama-server, another WASTE Studio) given by its address and, if it wants one,
// an API key; its models are read from its /v1/models and one is kept in the library.
// The logic (address rules, the model list, where the key is kept) is RemoteEndpointEditor's.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Dialog {
    id: dialog
    objectName: "remoteEngineDialog"
    title: qsTr("Add a remote engine")
    modal: true
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(560, parent ? parent.width - 64 : 560)
    standardButtons: Dialog.Cancel

    // A remote engine was kept in the library under `path` ("remote:ID").
    signal added(string path)

    RemoteEndpointEditor { id: editor }

    onOpened: { editor.clear(); urlField.text = ""; keyField.text = ""; nameField.text = ""; urlField.forceActiveFocus() }

    ColumnLayout {
        width: parent.width
        spacing: Theme.spacing

        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            text: qsTr("For models larger than this computer: a server that speaks the OpenAI API, such as vLLM or "
                       + "SGLang on several GPUs, llama-server, or WASTE Studio on another machine. The chat and this "
                       + "app's API server then use it; the key is kept in a file only you can read.")
        }
        GridLayout {
            Layout.fillWidth: true
            columns: 2
            columnSpacing: Theme.padding
            rowSpacing: Theme.spacing

            Label { text: qsTr("Address"); color: Theme.text }
            TextField {
                id: urlField
                objectName: "remoteUrlField"
                Layout.fillWidth: true
                placeholderText: "http://gpu-box:8000/v1"
                font.family: Theme.monoFamily
                Accessible.name: qsTr("Base URL of the remote server")
                onTextChanged: editor.baseUrl = text
                onAccepted: editor.listModels()
            }
            Label { text: qsTr("API key"); color: Theme.text }
            TextField {
                id: keyField
                objectName: "remoteKeyField"
                Layout.fillWidth: true
                echoMode: TextInput.Password
                placeholderText: qsTr("only if the server asks for one")
                Accessible.name: qsTr("API key of the remote server")
                onTextChanged: editor.apiKey = text
                onAccepted: editor.listModels()
            }
            Item { width: 1; height: 1 }
            RowLayout {
                Button {
                    objectName: "remoteListButton"
                    text: editor.busy ? qsTr("Asking…") : qsTr("List models")
                    enabled: !editor.busy && editor.resolvedUrl !== ""
                    Accessible.name: qsTr("Ask the server which models it serves")
                    onClicked: editor.listModels()
                }
                Label {
                    Layout.fillWidth: true
                    elide: Text.ElideMiddle
                    color: Theme.textMuted
                    font.family: Theme.monoFamily
                    text: editor.resolvedUrl
                }
            }
            Label { text: qsTr("Model"); color: Theme.text }
            ComboBox {
                id: modelBox
                objectName: "remoteModelBox"
                Layout.fillWidth: true
                enabled: editor.models.length > 0
                model: editor.models
                displayText: editor.models.length > 0 ? currentText : qsTr("List the models first")
                Accessible.name: qsTr("Model on the remote server")
            }
            Label { text: qsTr("Name"); color: Theme.text }
            TextField {
                id: nameField
                objectName: "remoteNameField"
                Layout.fillWidth: true
                placeholderText: modelBox.currentText !== "" ? qsTr("%1 (remote)").arg(modelBox.currentText) : ""
                Accessible.name: qsTr("Name shown in the library")
                onTextChanged: editor.name = text
            }
        }
        Label {
            objectName: "remoteError"
            Layout.fillWidth: true
            visible: editor.error !== ""
            wrapMode: Text.WordWrap
            color: Theme.danger
            text: editor.error
        }
        RowLayout {
            Layout.fillWidth: true
            Item { Layout.fillWidth: true }
            Button {
                objectName: "remoteAddButton"
                text: qsTr("Add and open")
                enabled: editor.models.length > 0 && modelBox.currentText !== ""
                Accessible.name: qsTr("Add this remote engine to the library and open it")
                onClicked: {
                    if (nameField.text === "")
                        editor.name = nameField.placeholderText
                    const path = editor.add(modelBox.currentText)
                    if (path === "")
                        return
                    dialog.added(path)
                    EngineController.openModel(path)
                    dialog.close()
                }
            }
        }
    }
}
