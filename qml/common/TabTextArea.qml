// A multi-line text field that is not a keyboard trap: Tab and Shift+Tab move the focus on,
// as everywhere else in the app, instead of typing a tab character (a chat message or a
// system prompt has no use for one, and a person on the keyboard must be able to leave).
import QtQuick
import QtQuick.Controls

TextArea {
    id: area
    activeFocusOnTab: true
    Keys.onTabPressed: (event) => {
        event.accepted = true
        area.nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason)
    }
    Keys.onBacktabPressed: (event) => {
        event.accepted = true
        area.nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason)
    }
}
