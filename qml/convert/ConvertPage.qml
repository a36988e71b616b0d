// Convert: turn downloaded safetensors into a streaming container. A guided flow:
// pick the source (and where the container goes), check what will be made and whether
// it fits, choose how the experts are stored (native, VQ3R or q4, each with its size, bytes
// per token, quality and time here) and the trunk precision, start, watch each layer,
// cancel, resume.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio
import WasteStudio.Core

PageFrame {
    id: page
    title: qsTr("Convert")
    subtitle: qsTr("Turn a downloaded model into a streaming container")

    // Opened from the Models page for a finished download: everything filled in and checked.
    function prepare(source) {
        job.prepare(source)
    }

    ConversionJob {
        id: job
        objectName: "conversionJob"
        onFinished: (ok) => { if (ok) AppSettings.lastModelPath = job.outputDir }
    }
    // The fields follow the job when it changes them (prepare), and the job follows the fields.
    Connections {
        target: job
        function onSettingsChanged() {
            if (sourceField.text !== job.sourceDir) sourceField.text = job.sourceDir
            if (outputField.text !== job.outputDir) outputField.text = job.outputDir
        }
    }

    FilePicker {
        id: sourceDialog
        title: qsTr("Folder of the downloaded model (config.json and .safetensors)")
        mode: FilePicker.OpenFolder
        folder: AppSettings.modelsFolder
        onAccepted: (paths) => {
            sourceField.text = paths[0]
            job.sourceDir = paths[0]
            outputField.text = job.suggestOutput(paths[0])
        }
    }
    FilePicker {
        id: outputDialog
        title: qsTr("Where the container goes")
        mode: FilePicker.OpenFolder
        folder: AppSettings.modelsFolder
        onAccepted: (paths) => outputField.text = paths[0]
    }

    readonly property bool showRun: job.state === ConversionJob.Running || job.state === ConversionJob.Cancelling
                                    || (job.state === ConversionJob.Finished && !job.alreadyComplete)
                                    || job.state === ConversionJob.Cancelled || job.state === ConversionJob.Failed

    ColumnLayout {
        anchors.fill: parent
        spacing: Theme.padding

        // The run at the top of the page, where the eye is after Start: progress, the layer,
        // rate and time left, Cancel; then the result and the way on (open it in a chat).
        Rectangle {
            objectName: "convertRunCard"
            Layout.fillWidth: true
            visible: page.showRun
            implicitHeight: runColumn.implicitHeight + 2 * Theme.padding
            radius: Theme.radius
            color: Theme.surface
            border.color: job.state === ConversionJob.Failed ? Theme.danger
                          : job.state === ConversionJob.Finished ? Theme.ok : Theme.accent
            ColumnLayout {
                id: runColumn
                anchors.fill: parent
                anchors.margins: Theme.padding
                spacing: Theme.unit
                RowLayout {
                    Layout.fillWidth: true
                    spacing: Theme.spacing
                    Label {
                        Layout.fillWidth: true
                        visible: job.state === ConversionJob.Running || job.state === ConversionJob.Cancelling
                        text: (job.currentLayer < 0 ? qsTr("Embeddings and head") : qsTr("Layer %1 of %2").arg(job.currentLayer + 1).arg(job.layers))
                              + " · " + job.phase + (job.tensor !== "" && job.tensor !== job.phase ? " · " + job.tensor : "")
                              + (job.resumed ? qsTr(" · resumed") : "")
                        elide: Text.ElideMiddle
                        color: Theme.text
                    }
                    Label {
                        objectName: "convertStatus"
                        visible: text !== ""
                        Layout.fillWidth: true
                        wrapMode: Text.WordWrap
                        text: job.state === ConversionJob.Finished ? qsTr("Done: the container is in %1").arg(job.outputDir)
                            : job.state === ConversionJob.Cancelled ? qsTr("Stopped. Finished layers are kept; Check, then Resume to continue.")
                            : job.state === ConversionJob.Failed ? job.errorText
                            : ""
                        color: job.state === ConversionJob.Failed ? Theme.danger : Theme.text
                    }
                    Button {
                        objectName: "convertCancel"
                        visible: job.state === ConversionJob.Running || job.state === ConversionJob.Cancelling
                        text: job.state === ConversionJob.Cancelling ? qsTr("Stopping…") : qsTr("Cancel")
                        enabled: job.state === ConversionJob.Running
                        Accessible.name: qsTr("Cancel the conversion (finished layers are kept)")
                        onClicked: job.cancel()
                    }
                    Button {
                        objectName: "convertOpenInChat"
                        visible: job.state === ConversionJob.Finished
                        text: qsTr("Open in chat")
                        highlighted: true
                        Accessible.name: qsTr("Open the new container and go to the chat")
                        onClicked: {
                            EngineController.openModel(job.outputDir, AppSettings.budgetFor(job.outputDir), AppSettings.contextTokens)
                            const w = ApplicationWindow.window
                            if (w && w.showPage) w.showPage("Chat")
                        }
                    }
                }
                ProgressBar {
                    objectName: "convertProgress"
                    Layout.fillWidth: true
                    from: 0; to: 1
                    value: job.progress
                    Accessible.name: qsTr("Conversion progress")
                }
                Label {
                    visible: job.state === ConversionJob.Running
                    text: job.etaSeconds < 0
                          ? qsTr("%1 · %2 · estimating the time left").arg(Math.round(job.progress * 100) + " %")
                                .arg(Units.rate(job.bytesPerSecond))
                          : qsTr("%1 · %2 · about %3 left").arg(Math.round(job.progress * 100) + " %")
                                .arg(Units.rate(job.bytesPerSecond)).arg(Units.duration(Math.round(job.etaSeconds)))
                    color: Theme.textMuted
                }
            }
        }

        ScrollView {
            id: scroll
            Layout.fillWidth: true
            Layout.fillHeight: true
            contentWidth: availableWidth
            clip: true

            ColumnLayout {
                width: scroll.availableWidth
                spacing: Theme.padding

                // 1. Source and target
                GroupBox {
                    Layout.fillWidth: true
                    title: qsTr("1. Model")
                    GridLayout {
                        anchors.fill: parent
                        columns: 3
                        columnSpacing: Theme.spacing
                        Label { text: qsTr("Source folder") }
                        TextField {
                            id: sourceField
                            objectName: "convertSource"
                            Layout.fillWidth: true
                            placeholderText: qsTr("A Hugging Face model folder or a finished download")
                            text: job.sourceDir
                            enabled: !job.busy
                            onEditingFinished: {
                                job.sourceDir = text
                                if (outputField.text === "") outputField.text = job.suggestOutput(text)
                            }
                            Accessible.name: qsTr("Source folder")
                        }
                        Button {
                            text: qsTr("Browse…")
                            enabled: !job.busy
                            Accessible.name: qsTr("Choose the source folder")
                            onClicked: sourceDialog.open()
                        }
                        Label { text: qsTr("Container") }
                        TextField {
                            id: outputField
                            objectName: "convertOutput"
                            Layout.fillWidth: true
                            placeholderText: qsTr("Folder for the streaming container")
                            enabled: !job.busy
                            onTextChanged: job.outputDir = text
                            Accessible.name: qsTr("Container folder")
                        }
                        Button {
                            text: qsTr("Browse…")
                            enabled: !job.busy
                            Accessible.name: qsTr("Choose the container folder")
                            onClicked: outputDialog.open()
                        }
                    }
                }

                // 2. Options
                GroupBox {
                    Layout.fillWidth: true
                    title: qsTr("2. Options")
                    ColumnLayout {
                        anchors.fill: parent
                        RowLayout {
                            spacing: Theme.spacing
                            Label { text: qsTr("Trunk precision") }
                            RadioButton {
                                objectName: "trunkBits4"
                                Accessible.name: qsTr("4-bit trunk: smaller, the default")
                                text: qsTr("4-bit (smaller, default)")
                                checked: job.trunkBits === 4
                                enabled: !job.busy
                                onToggled: if (checked) job.trunkBits = 4
                            }
                            RadioButton {
                                objectName: "trunkBits8"
                                Accessible.name: qsTr("8-bit trunk: more accurate, about twice the trunk")
                                text: qsTr("8-bit (more accurate, about twice the trunk)")
                                checked: job.trunkBits === 8
                                enabled: !job.busy
                                onToggled: if (checked) job.trunkBits = 8
                            }
                        }
                        Label {
                            visible: job.expertOptions.length === 0
                            text: qsTr("Experts: Check source and space (below) to compare the ways to store them.")
                            color: Theme.textMuted
                            wrapMode: Text.WordWrap
                            Layout.fillWidth: true
                        }
                        // The expert encodings side by side; the person chooses, the release's default first chosen.
                        Label {
                            visible: job.expertOptions.length > 0
                            text: qsTr("Experts — what each choice costs (times at this machine's measured speed: disk reads %1%2%3, %4 threads)")
                                  .arg(Units.rate(job.diskBytesPerSecond)).arg(job.diskDirect ? "" : qsTr(" (page cache)"))
                                  .arg(job.diskWriteBytesPerSecond > 0 ? qsTr(", writes %1").arg(Units.rate(job.diskWriteBytesPerSecond)) : "")
                                  .arg(job.encodeJobs)
                            wrapMode: Text.WordWrap
                            Layout.fillWidth: true
                        }
                        ButtonGroup { id: expertGroup }
                        // A Column, not this layout: the options are new with every check, and a Qt 6.4
                        // layout resized between a child's deletion and its next polish reads the freed
                        // child (QTBUG-111792).
                        Column {
                            Layout.fillWidth: true
                            visible: expertOptionList.count > 0
                            spacing: Theme.spacing
                            Repeater {
                                id: expertOptionList
                                objectName: "expertOptions"
                                model: job.expertOptions
                                delegate: Rectangle {
                                    id: optionCard
                                    required property var modelData
                                    readonly property bool chosen: job.chosenExperts === modelData.key
                                    objectName: "expertOption_" + modelData.key
                                    width: parent ? parent.width : 0
                                    implicitHeight: optionColumn.implicitHeight + 2 * Theme.spacing
                                    radius: Theme.radius
                                    color: chosen ? Theme.surfaceAlt : "transparent"
                                    border.color: chosen ? (modelData.discouraged ? Theme.warning : Theme.accent) : Theme.border
                                    ColumnLayout {
                                        id: optionColumn
                                        anchors.fill: parent
                                        anchors.margins: Theme.spacing
                                        spacing: Theme.unit
                                        RadioButton {
                                            objectName: "expertChoice_" + optionCard.modelData.key
                                            ButtonGroup.group: expertGroup
                                            checked: optionCard.chosen
                                            enabled: !job.busy && optionCard.modelData.available
                                            text: optionCard.modelData.key + (optionCard.modelData.format !== "" ? " (" + optionCard.modelData.format + ")" : "")
                                                  + (optionCard.modelData.isDefault ? qsTr(" — the release's default") : "")
                                            Accessible.name: qsTr("Store the experts as %1").arg(text)
                                            onToggled: if (checked) job.expertEncoding = optionCard.modelData.key
                                        }
                                        Label {
                                            objectName: "expertFigures_" + optionCard.modelData.key
                                            visible: optionCard.modelData.available
                                            Layout.fillWidth: true
                                            wrapMode: Text.WordWrap
                                            text: qsTr("Container %1 · record %2 · %3 read per token (%4 experts) · %5")
                                                  .arg(Units.bytes(optionCard.modelData.outputBytes))
                                                  .arg(Units.bytes(optionCard.modelData.recordBytes))
                                                  .arg(Units.bytes(optionCard.modelData.bytesPerToken))
                                                  .arg(optionCard.modelData.topK)
                                                  .arg(optionCard.modelData.estimatedSeconds < 0 ? qsTr("time not known")
                                                       : qsTr("about %1 to convert").arg(Units.duration(Math.max(1, Math.round(optionCard.modelData.estimatedSeconds)))))
                                            color: Theme.text
                                        }
                                        Label {
                                            objectName: "expertQuality_" + optionCard.modelData.key
                                            visible: optionCard.modelData.available
                                            Layout.fillWidth: true
                                            wrapMode: Text.WordWrap
                                            text: qsTr("Quality: %1").arg(optionCard.modelData.quality)
                                            color: optionCard.modelData.exact ? Theme.ok : Theme.textMuted
                                        }
                                        Label {
                                            objectName: "expertAdvice_" + optionCard.modelData.key
                                            Layout.fillWidth: true
                                            wrapMode: Text.WordWrap
                                            text: optionCard.modelData.available ? optionCard.modelData.advice
                                                                                 : qsTr("Not possible for this release: %1").arg(optionCard.modelData.advice)
                                            color: !optionCard.modelData.available || optionCard.modelData.discouraged ? Theme.warning : Theme.textMuted
                                            font.pixelSize: Theme.fontSmall
                                        }
                                    }
                                }
                            }
                        }
                        CheckBox {
                            objectName: "reclaim"
                            Accessible.name: qsTr("Delete each source shard once it is converted")
                            text: qsTr("Delete each source shard once it is converted (saves space; cannot be undone)")
                            checked: job.reclaim
                            enabled: !job.busy
                            onToggled: job.reclaim = checked
                        }
                    }
                }

                // What the check found (its button is in the bar below, always in view)
                GroupBox {
                    Layout.fillWidth: true
                    visible: job.planned || (job.canResume && job.state !== ConversionJob.Running)
                    title: qsTr("What the check found")
                    ColumnLayout {
                        anchors.fill: parent
                        GridLayout {
                            visible: job.planned
                            columns: 2
                            columnSpacing: Theme.padding
                            Label { text: qsTr("Architecture"); color: Theme.textMuted }
                            Label { text: job.arch }
                            Label { text: qsTr("Layers"); color: Theme.textMuted }
                            Label { text: qsTr("%1 (%2 with %3 experts each)").arg(job.layers).arg(job.moeLayers).arg(job.experts) }
                            Label { text: qsTr("Source"); color: Theme.textMuted }
                            Label { text: Units.bytes(job.sourceBytes) }
                            Label { text: qsTr("Container"); color: Theme.textMuted }
                            Label { text: Units.bytes(job.outputBytes) }
                            Label { text: qsTr("Still to write"); color: Theme.textMuted }
                            Label { text: Units.bytes(job.remainingBytes) }
                            Label { text: qsTr("Free space"); color: Theme.textMuted }
                            Label {
                                objectName: "convertFreeSpace"
                                text: Units.bytes(job.freeBytes) + (job.enoughSpace ? "" : qsTr(" — not enough: free %1 more").arg(Units.bytes(job.remainingBytes - job.freeBytes)))
                                color: job.enoughSpace ? Theme.ok : Theme.danger
                            }
                        }
                        Label {
                            visible: job.canResume && job.state !== ConversionJob.Running
                            text: qsTr("An interrupted conversion is in this folder: %1 of %2 parts are done. Start resumes it.").arg(job.unitsDone).arg(job.unitsTotal)
                            color: Theme.warning
                            wrapMode: Text.WordWrap
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: job.planned && job.alreadyComplete && job.state !== ConversionJob.Running
                            text: qsTr("This folder already holds this conversion; nothing to do.")
                            color: Theme.ok
                        }
                    }
                }
            }
        }
        // 3. Check and run, always in view below the steps, so neither button starts below the
        // fold of a small window (900x600); the progress shows at the top of the page.
        GroupBox {
            Layout.fillWidth: true
            title: qsTr("3. Check and convert")
            RowLayout {
                anchors.fill: parent
                spacing: Theme.spacing
                Button {
                    objectName: "convertCheck"
                    Accessible.name: qsTr("Check the source and the space needed")
                    text: qsTr("Check source and space")
                    highlighted: !job.planned
                    enabled: !job.busy && sourceField.text !== "" && outputField.text !== ""
                    onClicked: { job.sourceDir = sourceField.text; job.outputDir = outputField.text; job.plan() }
                }
                Button {
                    objectName: "convertStart"
                    text: job.canResume ? qsTr("Resume") : qsTr("Start")
                    highlighted: job.planned
                    enabled: !job.busy && job.planned && job.enoughSpace && !job.alreadyComplete
                             && job.state !== ConversionJob.Finished
                    Accessible.name: job.canResume ? qsTr("Resume the interrupted conversion") : qsTr("Start the conversion")
                    onClicked: job.start()
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.WordWrap
                    color: Theme.textMuted
                    text: !job.planned ? qsTr("Check the source and the space first.")
                          : qsTr("Progress shows at the top of this page.")
                }
            }
        }
    }
}
