// A tool call the model made (MCP) and its outcome: the tool, its server and the arguments;
// while it awaits approval the three choices (once, always for this tool, deny); then the
// result, collapsed, or why there is none.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

Rectangle {
    id: card
    objectName: "toolCallCard"
    required property int row
    required property var tool
    required property string resultText
    required property string error
    readonly property string status: tool && tool.status ? tool.status : ""
    readonly property bool toolError: tool && tool.isError === true

    implicitHeight: column.implicitHeight + 2 * Theme.spacing
    radius: Theme.radius
    color: Theme.surfaceAlt
    border.color: status === "awaiting" ? Theme.accent : Theme.border
    Accessible.role: Accessible.Grouping
    Accessible.name: qsTr("Tool call %1: %2").arg(tool ? tool.name : "").arg(statusText.text)

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: Theme.spacing
        anchors.leftMargin: Theme.padding
        anchors.rightMargin: Theme.padding
        spacing: Theme.unit

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: qsTr("Tool call: %1").arg(card.tool ? card.tool.name : "")
                font.bold: true
                color: Theme.text
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                visible: card.tool && !!card.tool.server
                text: qsTr("from %1").arg(card.tool && card.tool.server ? card.tool.server : "")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
            }
        }
        Label {
            id: statusText
            objectName: "toolStatus"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: Theme.fontSmall
            color: card.status === "failed" || card.toolError ? Theme.danger
                 : card.status === "done" ? Theme.ok
                 : card.status === "awaiting" ? Theme.accent : Theme.textMuted
            text: card.status === "awaiting" ? qsTr("Waiting for your approval: the model wants to run this tool with these arguments.")
                : card.status === "running" ? qsTr("Running…")
                : card.status === "done" ? (card.toolError ? qsTr("The tool reported an error.") : qsTr("Done."))
                : card.status === "failed" ? qsTr("Failed: %1").arg(card.error)
                : card.status === "denied" ? qsTr("Declined: the model was told it did not run.")
                : ""
        }
        Rectangle {
            Layout.fillWidth: true
            implicitHeight: argumentsText.implicitHeight + 2 * Theme.unit + 2
            radius: Theme.radius
            color: Theme.codeBackground
            border.color: Theme.border
            TextEdit {
                id: argumentsText
                objectName: "toolArguments"
                anchors.fill: parent
                anchors.margins: Theme.unit + 1
                text: card.tool && card.tool.arguments ? card.tool.arguments : "{}"
                textFormat: TextEdit.PlainText
                wrapMode: TextEdit.WrapAnywhere
                readOnly: true
                selectByMouse: true
                color: Theme.text
                selectionColor: Theme.accent
                font.family: Theme.monoFamily
                font.pixelSize: Theme.fontSmall
                Accessible.name: qsTr("Arguments: %1").arg(text)
            }
        }
        Flow {
            Layout.fillWidth: true
            visible: card.status === "awaiting"
            spacing: Theme.spacing
            Button {
                objectName: "toolRunOnce"
                text: qsTr("Run once")
                highlighted: true
                Accessible.name: qsTr("Run %1 this once").arg(card.tool ? card.tool.name : "")
                onClicked: ChatController.answerToolCall(card.row, "once")
            }
            Button {
                objectName: "toolRunAlways"
                text: qsTr("Always for this tool")
                Accessible.name: qsTr("Run %1 now and from now on without asking").arg(card.tool ? card.tool.name : "")
                onClicked: ChatController.answerToolCall(card.row, "always")
            }
            Button {
                objectName: "toolDeny"
                text: qsTr("Deny")
                flat: true
                Accessible.name: qsTr("Do not run %1").arg(card.tool ? card.tool.name : "")
                onClicked: ChatController.answerToolCall(card.row, "deny")
            }
        }
        // The result, collapsed: it can be long, and the answer that follows says what it means.
        ToolButton {
            id: resultToggle
            objectName: "toolResultToggle"
            visible: (card.status === "done" || card.status === "failed") && card.resultText !== ""
            checkable: true
            padding: 2
            text: (checked ? "▾ " : "▸ ") + qsTr("Result (%1 characters)").arg(card.resultText.length)
            font.pixelSize: Theme.fontSmall
            Accessible.name: checked ? qsTr("Hide the tool's result") : qsTr("Show the tool's result")
            contentItem: Label {
                text: resultToggle.text
                color: Theme.textMuted
                font: resultToggle.font
            }
            background: Item { }
        }
        TextEdit {
            objectName: "toolResult"
            visible: resultToggle.visible && resultToggle.checked
            Layout.fillWidth: true
            text: card.resultText
            textFormat: TextEdit.PlainText
            wrapMode: TextEdit.Wrap
            readOnly: true
            selectByMouse: true
            color: Theme.text
            selectionColor: Theme.accent
            font.family: Theme.monoFamily
            font.pixelSize: Theme.fontSmall
            Accessible.name: qsTr("Result: %1").arg(text)
        }
    }
}
