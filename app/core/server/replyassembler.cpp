#include "server/replyassembler.h"

#include "server/openaijson.h"

#include <QJsonArray>

QList<QJsonObject> ChatReplyAssembler::push(const waste::ReplyDelta &delta)
{
    const QString reasoning = QString::fromStdString(delta.reasoning);
    const QString content = QString::fromStdString(delta.content);
    QList<ToolCall> calls;
    for (const waste::ReplyToolCall &c : delta.toolCalls)
        calls.append(ToolCall{openai::newCallId(), QString::fromStdString(c.name), QString::fromStdString(c.arguments)});
    const int firstIndex = int(m_reply.toolCalls.size());
    m_reply.reasoning += reasoning;
    m_reply.content += content;
    m_reply.toolCalls += calls;

    // Text first, then the calls in a chunk of their own: where tokens arrive together (a busy
    // machine hands several to one delta) the text before a call must still read as before it,
    // not beside it in one chunk.
    QList<QJsonObject> out;
    QJsonObject d;
    if (!reasoning.isEmpty())
        d.insert(QStringLiteral("reasoning_content"), reasoning);
    if (!content.isEmpty())
        d.insert(QStringLiteral("content"), content);
    if (!d.isEmpty())
        out << d;
    if (!calls.isEmpty())
        out << QJsonObject{{QStringLiteral("tool_calls"), openai::toolCallsJson(calls, true, firstIndex)}};
    return out;
}
