// Server: the OpenAI-compatible API for other programs. One switch; the URL to copy while it
// runs; where it listens, the key it asks for, the browser origins it allows; a live log.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: qsTr("Server")
    subtitle: qsTr("Let other programs use the open model through an OpenAI-compatible API")

    // QML has no clipboard API: a hidden TextEdit copies for us.
    TextEdit { id: clipboard; visible: false }
    function copy(text) {
        clipboard.text = text
        clipboard.selectAll()
        clipboard.copy()
        clipboard.text = ""
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: Theme.padding

        // The switch and what it means right now.
        Rectangle {
            Layout.fillWidth: true
            implicitHeight: switchRow.implicitHeight + Theme.padding * 2
            radius: Theme.radius
            color: Theme.surface
            border.color: Theme.border

            RowLayout {
                id: switchRow
                anchors.fill: parent
                anchors.margins: Theme.padding
                spacing: Theme.padding

                Switch {
                    id: serverSwitch
                    objectName: "serverSwitch"
                    checked: ApiServer.running
                    scale: 1.4
                    Layout.leftMargin: Theme.spacing
                    Layout.rightMargin: Theme.spacing
                    Accessible.name: ApiServer.running ? qsTr("Stop the API server") : qsTr("Start the API server")
                    onToggled: {
                        ApiServer.setRunning(checked)
                        checked = Qt.binding(() => ApiServer.running)
                    }
                }
                ColumnLayout {
                    Layout.fillWidth: true
                    spacing: 2
                    Label {
                        text: ApiServer.running ? qsTr("The API server is on") : qsTr("The API server is off")
                        font.pixelSize: Theme.fontLarge
                        font.bold: true
                        color: Theme.text
                    }
                    Label {
                        Layout.fillWidth: true
                        wrapMode: Text.WordWrap
                        color: Theme.textMuted
                        text: !ApiServer.running
                              ? qsTr("No port is open. Switch it on to let editors, agents and scripts use the model.")
                              : EngineController.modelName
                                ? qsTr("Serving %1 · %2 in progress").arg(EngineController.modelName)
                                      .arg(Units.count(ApiServer.activeRequests, qsTr("request"), qsTr("requests")))
                                : qsTr("Listening, but no model is open: requests get 503 until you open one.")
                    }
                    Label {
                        objectName: "serverError"
                        visible: ApiServer.errorString !== ""
                        Layout.fillWidth: true
                        wrapMode: Text.WordWrap
                        text: ApiServer.errorString
                        color: Theme.danger
                        Accessible.name: qsTr("Server error: %1").arg(text)
                    }
                }
                RowLayout {
                    visible: ApiServer.running
                    spacing: Theme.spacing
                    TextField {
                        objectName: "serverUrl"
                        readOnly: true
                        selectByMouse: true
                        text: ApiServer.url
                        font.family: Theme.monoFamily
                        Layout.preferredWidth: 240
                        Layout.minimumWidth: 160
                        Accessible.name: qsTr("Server URL")
                    }
                    Button {
                        text: qsTr("Copy URL")
                        Accessible.name: qsTr("Copy the server URL")
                        onClicked: page.copy(ApiServer.url)
                    }
                }
            }
        }

        // Settings: applied at the next start.
        GridLayout {
            Layout.fillWidth: true
            columns: 2
            columnSpacing: Theme.padding
            rowSpacing: Theme.spacing
            enabled: !ApiServer.running

            Label { text: qsTr("Bind address"); color: Theme.text }
            RowLayout {
                spacing: Theme.spacing
                ComboBox {
                    id: hostBox
                    objectName: "hostBox"
                    editable: true
                    implicitWidth: 220
                    model: ["127.0.0.1", "0.0.0.0"]
                    Component.onCompleted: editText = ApiServer.host
                    onActivated: ApiServer.host = currentText
                    onAccepted: ApiServer.host = editText
                    onActiveFocusChanged: if (!activeFocus) ApiServer.host = editText
                    Accessible.name: qsTr("Bind address")
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.WordWrap
                    color: ApiServer.hostIsLoopback || ApiServer.apiKey !== "" ? Theme.textMuted : Theme.warning
                    text: ApiServer.hostIsLoopback
                          ? qsTr("This computer only.")
                          : qsTr("Other computers can connect: an API key is required.")
                }
            }

            Label { text: qsTr("Port"); color: Theme.text }
            SpinBox {
                objectName: "portBox"
                from: 1
                to: 65535
                editable: true
                value: ApiServer.port
                textFromValue: (v) => String(v)
                valueFromText: (t) => parseInt(t)
                onValueModified: ApiServer.port = value
                Accessible.name: qsTr("Port")
            }

            Label { text: qsTr("API key"); color: Theme.text }
            RowLayout {
                Layout.fillWidth: true
                spacing: Theme.spacing
                TextField {
                    id: keyField
                    objectName: "apiKeyField"
                    property bool shown: false
                    // Shares the row with its buttons: narrower windows shorten the field,
                    // never push the buttons out.
                    Layout.fillWidth: true
                    Layout.maximumWidth: 340
                    Layout.minimumWidth: 120
                    text: ApiServer.apiKey
                    echoMode: shown ? TextInput.Normal : TextInput.Password
                    font.family: Theme.monoFamily
                    placeholderText: qsTr("none")
                    onEditingFinished: ApiServer.apiKey = text
                    Accessible.name: qsTr("API key")
                }
                Button {
                    text: keyField.shown ? qsTr("Hide") : qsTr("Show")
                    enabled: true
                    Accessible.name: keyField.shown ? qsTr("Hide the API key") : qsTr("Show the API key")
                    onClicked: keyField.shown = !keyField.shown
                }
                Button {
                    text: qsTr("Generate")
                    Accessible.name: qsTr("Generate a new API key")
                    onClicked: ApiServer.apiKey = ApiServer.generateApiKey()
                }
                Button {
                    text: qsTr("Copy")
                    enabled: ApiServer.apiKey !== ""
                    Accessible.name: qsTr("Copy the API key")
                    onClicked: page.copy(ApiServer.apiKey)
                }
            }

            Label { text: qsTr("Browser origins (CORS)"); color: Theme.text }
            TextField {
                objectName: "corsField"
                Layout.fillWidth: true
                text: ApiServer.corsOrigins.join(", ")
                placeholderText: qsTr("off · e.g. http://localhost:3000, https://app.example")
                onEditingFinished: ApiServer.corsOrigins = text.split(/[\s,]+/).filter((s) => s.length > 0)
                Accessible.name: qsTr("Allowed browser origins, separated by commas")
            }

            Label { text: qsTr("Images"); color: Theme.text }
            CheckBox {
                text: qsTr("Accept local file paths as images (data: URLs always work)")
                checked: ApiServer.allowLocalImages
                onToggled: ApiServer.allowLocalImages = checked
                Accessible.name: text
            }
        }
        Label {
            visible: ApiServer.running
            text: qsTr("Stop the server to change these settings.")
            color: Theme.textMuted
            font.pixelSize: Theme.fontSmall
        }

        // The live request log.
        RowLayout {
            Layout.fillWidth: true
            Label {
                text: qsTr("Requests")
                font.bold: true
                color: Theme.text
                Accessible.role: Accessible.Heading
            }
            Item { Layout.fillWidth: true }
            Button {
                text: qsTr("Clear log")
                enabled: ApiServer.log.count > 0
                Accessible.name: qsTr("Clear the request log")
                onClicked: ApiServer.log.clear()
            }
        }
        Rectangle {
            id: logBox
            Layout.fillWidth: true
            Layout.fillHeight: true
            color: Theme.surface
            border.color: Theme.border
            radius: Theme.radius

            readonly property var widths: [0.12, 0.16, 0.38, 0.1, 0.12, 0.12]

            ColumnLayout {
                anchors.fill: parent
                anchors.margins: Theme.spacing
                spacing: 0

                Row {
                    id: logHeader
                    Layout.fillWidth: true
                    Repeater {
                        model: [qsTr("Time"), qsTr("Client"), qsTr("Route"), qsTr("Status"), qsTr("Tokens"), qsTr("ms")]
                        Label {
                            width: logView.width * logBox.widths[index]
                            text: modelData
                            color: Theme.textMuted
                            font.bold: true
                        }
                    }
                }
                ListView {
                    id: logView
                    objectName: "requestLog"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    model: ApiServer.log
                    activeFocusOnTab: true
                    Accessible.name: qsTr("Request log, %1 entries").arg(count)
                    ScrollBar.vertical: ScrollBar {}
                    onCountChanged: positionViewAtEnd()
                    Label {
                        anchors.centerIn: parent
                        visible: logView.count === 0
                        text: qsTr("No requests yet.")
                        color: Theme.textMuted
                    }
                    delegate: Row {
                        required property var time
                        required property string client
                        required property string route
                        required property int status
                        required property int tokens
                        required property var durationMs
                        readonly property var w: logBox.widths
                        width: logView.width
                        Label {
                            width: logView.width * parent.w[0]
                            text: Qt.formatTime(time, "HH:mm:ss")
                            color: Theme.text
                            font.family: Theme.monoFamily
                        }
                        Label {
                            width: logView.width * parent.w[1]
                            text: client
                            color: Theme.text
                            elide: Text.ElideRight
                        }
                        Label {
                            width: logView.width * parent.w[2]
                            text: route
                            color: Theme.text
                            elide: Text.ElideRight
                            font.family: Theme.monoFamily
                        }
                        Label {
                            width: logView.width * parent.w[3]
                            text: status === 0 ? qsTr("…") : String(status)
                            color: status === 0 ? Theme.textMuted
                                 : status < 400 ? Theme.ok
                                 : status < 500 ? Theme.warning : Theme.danger
                            font.bold: true
                        }
                        Label {
                            width: logView.width * parent.w[4]
                            text: tokens > 0 ? String(tokens) : "–"
                            color: Theme.text
                        }
                        Label {
                            width: logView.width * parent.w[5]
                            text: durationMs >= 0 ? String(durationMs) : "–"
                            color: Theme.text
                        }
                    }
                }
            }
        }
    }
}
