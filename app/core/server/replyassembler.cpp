#include "server/replyassembler.h"

#include "server/openaijson.h"

#include <QJsonDocument>
#include <QRandomGenerator>

namespace {

// A call the request did not allow, as the text a ChatML model would have written.
QString callAsText(const waste::ReplyToolCall &c)
{
    QJsonObject o{{QStringLiteral("name"), QString::fromStdString(c.name)}};
    const QJsonDocument args = QJsonDocument::fromJson(QByteArray::fromStdString(c.arguments));
    o.insert(QStringLiteral("arguments"),
             args.isObject() ? QJsonValue(args.object()) : QJsonValue(QString::fromStdString(c.arguments)));
    return QStringLiteral("<tool_call>%1</tool_call>").arg(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
}

} // namespace

ChatReplyAssembler::ChatReplyAssembler(waste::ChatFormat format, const ApiRequest &request)
    : m_format(format), m_tools(request.tools)
{
    if (request.toolsActive()) {
        for (const QJsonValue &t : request.tools)
            m_names.insert(t.toObject().value(QStringLiteral("function")).toObject().value(QStringLiteral("name")).toString());
        // A forced call comes in the format's own call layout (the engine's reply frame),
        // read by the reply parser, except in the Plain format: a bare JSON document.
        m_forcedJson = format == waste::ChatFormat::Plain && request.toolCallForced();
        m_mayBeBareJson = format != waste::ChatFormat::K3 && !request.toolCallForced();
    }
}

QJsonObject ChatReplyAssembler::deltaOf(const QString &reasoning, const QString &content, const QList<ToolCall> &calls)
{
    QJsonObject d;
    if (!reasoning.isEmpty())
        d.insert(QStringLiteral("reasoning_content"), reasoning);
    if (!content.isEmpty())
        d.insert(QStringLiteral("content"), content);
    if (!calls.isEmpty()) {
        d.insert(QStringLiteral("tool_calls"),
                 openai::toolCallsJson(calls, true, int(m_reply.toolCalls.size() - calls.size())));
    }
    return d;
}

void ChatReplyAssembler::takeCalls(const std::vector<waste::ReplyToolCall> &calls, QString &content,
                                   QList<ToolCall> &accepted)
{
    for (const waste::ReplyToolCall &c : calls) {
        const QString name = QString::fromStdString(c.name);
        if (!m_names.contains(name)) {
            content += callAsText(c);
            continue;
        }
        ToolCall t{openai::newCallId(), name, QString::fromStdString(c.arguments)};
        m_reply.toolCalls.append(t);
        accepted.append(t);
    }
}

QList<QJsonObject> ChatReplyAssembler::push(const waste::ReplyDelta &delta)
{
    if (m_forcedJson)
        return {}; // read whole at the end
    const QString reasoning = QString::fromStdString(delta.reasoning);
    QString content = QString::fromStdString(delta.content);
    QList<ToolCall> calls;
    takeCalls(delta.toolCalls, content, calls);
    m_reply.reasoning += reasoning;

    if (m_mayBeBareJson && !m_contentSeen && !content.isEmpty()) {
        m_contentSeen = true;
        const QString t = content.trimmed();
        m_holdContent = t.startsWith(QLatin1Char('{')) || t.startsWith(QLatin1Char('['));
    }
    if (m_holdContent) {
        m_heldContent += content;
        content.clear();
    }
    m_reply.content += content;
    const QJsonObject d = deltaOf(reasoning, content, calls);
    return d.isEmpty() ? QList<QJsonObject>{} : QList<QJsonObject>{d};
}

QList<QJsonObject> ChatReplyAssembler::finish(const QString &rawText)
{
    if (m_forcedJson) {
        const ParsedReply parsed = parseToolCalls(rawText, m_tools);
        m_reply.content = parsed.content;
        m_reply.toolCalls = parsed.toolCalls;
        const QJsonObject d = deltaOf(QString(), m_reply.content, m_reply.toolCalls);
        return d.isEmpty() ? QList<QJsonObject>{} : QList<QJsonObject>{d};
    }
    if (!m_holdContent || m_heldContent.isEmpty())
        return {};
    QString content;
    QList<ToolCall> calls;
    const ParsedReply parsed = parseToolCalls(m_heldContent, m_tools);
    if (!parsed.toolCalls.isEmpty() && parsed.content.isEmpty()) {
        for (const ToolCall &c : parsed.toolCalls)
            if (m_names.contains(c.name))
                calls.append(c);
    }
    if (calls.size() == parsed.toolCalls.size() && !calls.isEmpty())
        m_reply.toolCalls += calls;
    else {
        calls.clear();
        content = m_heldContent;
    }
    m_heldContent.clear();
    m_reply.content += content;
    const QJsonObject d = deltaOf(QString(), content, calls);
    return d.isEmpty() ? QList<QJsonObject>{} : QList<QJsonObject>{d};
}
