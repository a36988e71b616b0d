// Planner: where the RAM goes, and what each budget buys.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import WasteStudio

PageFrame {
    title: qsTr("Planner")
    subtitle: qsTr("Choose the RAM budget: the floor, the default and the paging cliff")
}
