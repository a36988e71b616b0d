// An answer's Markdown blocks are made anew with every streamed token. Qt 6.4's layouts keep a
// pointer to each child until their next polish (QTBUG-111792, fixed in 6.5): a layout resized
// after a child was deleted and before that polish reads freed memory. The blocks therefore sit
// in a Column, not in the ColumnLayout; this drives the very sequence that crashed: new text,
// the old blocks deleted (wait(0) runs deferred deletes), then a new width before any polish.
import QtQuick
import QtTest
import WasteStudio
import WasteStudio.Core

Item {
    id: root
    width: 900
    height: 600

    MessageView {
        id: message
        width: 700
        index: 0
        role: "assistant"
        text: ""
        thinking: ""
        displayText: "First words."
        displayThinking: ""
        thinkingSeconds: 0
        images: []
        tokens: 0
        tokensPerSecond: 0
        hitRate: -1
        finishReason: ""
        error: ""
        streaming: true
        tool: null
    }

    TestCase {
        name: "MessageView"
        when: windowShown

        function test_blocksRemadeByStreamingSurviveAResizeBeforeThePolish() {
            for (let i = 0; i < 24; ++i) {
                let text = "Paragraph " + i + " of the answer."
                for (let k = 0; k <= i % 4; ++k)
                    text += "\n\n```js\nconst x" + k + " = " + i + "\n```\n\nAnd prose after block " + k + "."
                message.displayText = text
                wait(0)
                message.width = 500 + (i % 3) * 150
            }
            waitForRendering(message)
            // The last text: a paragraph, then four code blocks each followed by prose; every
            // prose block takes the answer's full width.
            const prose = []
            collect(message, "answerProse", prose)
            compare(prose.length, 5)
            for (const p of prose)
                compare(p.width, message.width)
            verify(message.implicitHeight > prose.reduce((sum, p) => sum + p.height, 0))
        }

        function collect(item, name, out) {
            if (item.objectName === name && item.visible)
                out.push(item)
            for (let i = 0; i < item.children.length; ++i)
                collect(item.children[i], name, out)
        }
    }
}
