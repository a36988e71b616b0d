// One visible focus ring for the whole window: a frame in the accent colour around the
// control that has the keyboard focus, drawn above everything. The styles' own cues are
// too faint (a ToolButton only recolours its text; a highlighted Button's border has the
// colour of its background), and views (lists) have none. Not shown after a mouse click.
import QtQuick
import QtQuick.Controls
import WasteStudio

Rectangle {
    id: ring
    objectName: "focusRing"
    property Item target: null
    // Controls say whether their focus came from the keyboard (visualFocus); text fields
    // say how it came (focusReason); views (lists) say neither and always get the ring.
    readonly property bool wanted: target !== null && target.visible
        && (target.visualFocus !== undefined ? target.visualFocus
            : target.focusReason !== undefined ? target.focusReason !== Qt.MouseFocusReason
            : true)
    visible: wanted
    z: 1e6
    color: "transparent"
    border.color: Theme.accent
    border.width: 2
    radius: Theme.radius
    antialiasing: true

    // Follows the target as pages scroll or lay out again: placed after every frame, moved
    // only when it is off, so a still window draws no more frames.
    function place() {
        if (!wanted || !parent)
            return
        const p = target.mapToItem(parent, 0, 0)
        const nx = p.x - 3, ny = p.y - 3, nw = target.width + 6, nh = target.height + 6
        if (nx !== x || ny !== y || nw !== width || nh !== height) {
            x = nx; y = ny; width = nw; height = nh
        }
    }
    onTargetChanged: place()
    onWantedChanged: place()
    Connections {
        target: ring.Window.window
        function onFrameSwapped() { ring.place() }
    }
}
