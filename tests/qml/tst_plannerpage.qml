// The Planner page loads, and its empty state speaks in words when no model is planned.
import QtQuick
import QtQuick.Controls
import QtTest
import WasteStudio
import WasteStudio.Core

Item {
    width: 1100
    height: 720

    PlannerPage { id: page; anchors.fill: parent }

    TestCase {
        name: "PlannerPage"
        when: windowShown

        // A binding loop is a bug in the page, whatever the test function looks at.
        function init() { failOnWarning(/Binding loop detected/) }

        function test_plansTheReferenceContainer() {
            PlannerController.container = fixturesDir + "/reference-container/r3.waste"
            tryVerify(() => PlannerController.ready, 20000, PlannerController.error)
            compare(PlannerController.floorBytes, 10710080)
            verify(PlannerController.points.length > 10)
            verify(PlannerController.budgetSentence.length > 0)
            PlannerController.budget = PlannerController.floorBytes - 1
            compare(PlannerController.budgetLevel, 2)
            verify(PlannerController.budgetSentence.indexOf("Below the floor") === 0)
            // The line that says when the decode could not be measured: shown exactly then.
            const warning = findChild(page, "computeWarning")
            verify(warning !== null)
            compare(warning.visible, PlannerController.computeWarning.length > 0)
            compare(warning.text, PlannerController.computeWarning)
        }
    }
}
