#include "server/messagesjson.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUuid>

namespace anthropic {

QString errorType(int status)
{
    switch (status) {
    case 400:
        return QStringLiteral("invalid_request_error");
    case 401:
        return QStringLiteral("authentication_error");
    case 403:
        return QStringLiteral("permission_error");
    case 404:
        return QStringLiteral("not_found_error");
    case 413:
        return QStringLiteral("request_too_large");
    case 429:
        return QStringLiteral("rate_limit_error");
    case 503:
    case 529:
        return QStringLiteral("overloaded_error");
    default:
        break;
    }
    return status >= 500 ? QStringLiteral("api_error") : QStringLiteral("invalid_request_error");
}

QJsonObject errorBody(const ApiError &error)
{
    return {{QStringLiteral("type"), QStringLiteral("error")},
            {QStringLiteral("error"), QJsonObject{{QStringLiteral("type"), errorType(error.status)},
                                                  {QStringLiteral("message"), error.message}}}};
}

QString matchedStopSequence(const QString &rawText, const QString &content, const QStringList &stops)
{
    if (stops.isEmpty())
        return {};
    // Search after the content's end: the raw output around it holds markup, and a stop
    // sequence met earlier (in reasoning, say) did not end the reply.
    const QString anchor = content.trimmed().right(64);
    qsizetype from = 0;
    if (!anchor.isEmpty()) {
        const qsizetype at = rawText.lastIndexOf(anchor);
        if (at >= 0)
            from = at + anchor.size();
    }
    QString best;
    qsizetype bestAt = -1;
    for (const QString &s : stops) {
        const qsizetype at = rawText.indexOf(s, from);
        if (at >= 0 && (bestAt < 0 || at < bestAt)) {
            best = s;
            bestAt = at;
        }
    }
    return best;
}

QString toolUseId(const QString &callId)
{
    return callId.startsWith(QLatin1String("call_")) ? QStringLiteral("toolu_") + callId.mid(5) : callId;
}

} // namespace anthropic

namespace {

// A thinking block's signature. Anthropic's are opaque and verified when sent back; this
// server reads thinking back as it is, so the signature only lets clients that require one
// round-trip the block: a digest of the text.
QString signatureOf(const QString &thinking)
{
    return QString::fromLatin1(QCryptographicHash::hash(thinking.toUtf8(), QCryptographicHash::Sha256).toBase64());
}

QJsonObject inputOf(const QString &arguments)
{
    const QJsonDocument doc = QJsonDocument::fromJson(arguments.toUtf8());
    return doc.isObject() ? doc.object() : QJsonObject{};
}

QJsonObject block(const QString &type, std::initializer_list<QPair<QString, QJsonValue>> fields)
{
    QJsonObject o{{QStringLiteral("type"), type}};
    for (const auto &f : fields)
        o.insert(f.first, f.second);
    return o;
}

} // namespace

MessagesDialect::MessagesDialect(const QString &model, const QStringList &stopSequences)
    : m_id(QStringLiteral("msg_") + QUuid::createUuid().toString(QUuid::Id128)), m_model(model), m_stops(stopSequences)
{
}

QJsonObject MessagesDialect::usageJson(int promptTokens, int cachedTokens, int outputTokens) const
{
    // Anthropic counts prompt tokens read from its cache apart from input_tokens.
    return {{QStringLiteral("input_tokens"), promptTokens - cachedTokens},
            {QStringLiteral("cache_creation_input_tokens"), 0},
            {QStringLiteral("cache_read_input_tokens"), cachedTokens},
            {QStringLiteral("output_tokens"), outputTokens}};
}

QPair<QString, QJsonValue> MessagesDialect::stopOf(const ParsedReply &reply, const ReplyEnd &end) const
{
    if (!reply.toolCalls.isEmpty())
        return {QStringLiteral("tool_use"), QJsonValue(QJsonValue::Null)};
    if (end.reason == waste::FinishReason::Length || end.reason == waste::FinishReason::ContextFull)
        return {QStringLiteral("max_tokens"), QJsonValue(QJsonValue::Null)};
    const QString stop = anthropic::matchedStopSequence(end.rawText, reply.content, m_stops);
    if (!stop.isEmpty())
        return {QStringLiteral("stop_sequence"), stop};
    return {QStringLiteral("end_turn"), QJsonValue(QJsonValue::Null)};
}

QJsonObject MessagesDialect::body(const ParsedReply &reply, const ReplyEnd &end)
{
    QJsonArray content;
    if (!reply.reasoning.isEmpty())
        content.append(block(QStringLiteral("thinking"), {{QStringLiteral("thinking"), reply.reasoning},
                                                          {QStringLiteral("signature"), signatureOf(reply.reasoning)}}));
    if (!reply.content.isEmpty() || reply.toolCalls.isEmpty())
        content.append(block(QStringLiteral("text"), {{QStringLiteral("text"), reply.content}}));
    for (const ToolCall &c : reply.toolCalls)
        content.append(block(QStringLiteral("tool_use"), {{QStringLiteral("id"), anthropic::toolUseId(c.id)},
                                                          {QStringLiteral("name"), c.name},
                                                          {QStringLiteral("input"), inputOf(c.arguments)}}));
    const auto [reason, sequence] = stopOf(reply, end);
    return {{QStringLiteral("id"), m_id},
            {QStringLiteral("type"), QStringLiteral("message")},
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("model"), m_model},
            {QStringLiteral("content"), content},
            {QStringLiteral("stop_reason"), reason},
            {QStringLiteral("stop_sequence"), sequence},
            {QStringLiteral("usage"), usageJson(end.promptTokens, end.cachedTokens, end.completionTokens)}};
}

QByteArray MessagesDialect::streamKeepAlive() const
{
    return sseNamedEvent(QStringLiteral("ping"), {{QStringLiteral("type"), QStringLiteral("ping")}});
}

QByteArray MessagesDialect::streamStart(int promptTokens)
{
    const QJsonObject message{{QStringLiteral("id"), m_id},
                              {QStringLiteral("type"), QStringLiteral("message")},
                              {QStringLiteral("role"), QStringLiteral("assistant")},
                              {QStringLiteral("model"), m_model},
                              {QStringLiteral("content"), QJsonArray{}},
                              {QStringLiteral("stop_reason"), QJsonValue(QJsonValue::Null)},
                              {QStringLiteral("stop_sequence"), QJsonValue(QJsonValue::Null)},
                              {QStringLiteral("usage"), usageJson(promptTokens, 0, 0)}};
    return sseNamedEvent(QStringLiteral("message_start"), {{QStringLiteral("type"), QStringLiteral("message_start")},
                                                            {QStringLiteral("message"), message}})
        + sseNamedEvent(QStringLiteral("ping"), {{QStringLiteral("type"), QStringLiteral("ping")}});
}

QByteArray MessagesDialect::openBlock(Open kind)
{
    if (m_open == kind)
        return {};
    QByteArray out = closeBlock();
    m_open = kind;
    m_thinking.clear();
    const QJsonObject start = kind == Open::Thinking
        ? block(QStringLiteral("thinking"), {{QStringLiteral("thinking"), QString()}, {QStringLiteral("signature"), QString()}})
        : block(QStringLiteral("text"), {{QStringLiteral("text"), QString()}});
    return out + sseNamedEvent(QStringLiteral("content_block_start"),
                               {{QStringLiteral("type"), QStringLiteral("content_block_start")},
                                {QStringLiteral("index"), m_index},
                                {QStringLiteral("content_block"), start}});
}

QByteArray MessagesDialect::closeBlock()
{
    if (m_open == Open::None)
        return {};
    QByteArray out;
    if (m_open == Open::Thinking)
        out += sseNamedEvent(QStringLiteral("content_block_delta"),
                             {{QStringLiteral("type"), QStringLiteral("content_block_delta")},
                              {QStringLiteral("index"), m_index},
                              {QStringLiteral("delta"), block(QStringLiteral("signature_delta"),
                                                              {{QStringLiteral("signature"), signatureOf(m_thinking)}})}});
    out += sseNamedEvent(QStringLiteral("content_block_stop"),
                         {{QStringLiteral("type"), QStringLiteral("content_block_stop")}, {QStringLiteral("index"), m_index}});
    m_open = Open::None;
    ++m_index;
    return out;
}

QByteArray MessagesDialect::toolUse(const QJsonObject &call)
{
    QByteArray out = closeBlock();
    const QJsonObject fn = call.value(QStringLiteral("function")).toObject();
    const QString arguments = fn.value(QStringLiteral("arguments")).toString();
    out += sseNamedEvent(QStringLiteral("content_block_start"),
                         {{QStringLiteral("type"), QStringLiteral("content_block_start")},
                          {QStringLiteral("index"), m_index},
                          {QStringLiteral("content_block"),
                           block(QStringLiteral("tool_use"),
                                 {{QStringLiteral("id"), anthropic::toolUseId(call.value(QStringLiteral("id")).toString())},
                                  {QStringLiteral("name"), fn.value(QStringLiteral("name"))},
                                  {QStringLiteral("input"), QJsonObject{}}})}});
    // The call is whole when the assembler hands it over: its input goes out as one piece
    // of JSON, written compactly as the input the non-streamed reply carries.
    const QString json = QString::fromUtf8(QJsonDocument(inputOf(arguments)).toJson(QJsonDocument::Compact));
    out += sseNamedEvent(QStringLiteral("content_block_delta"),
                         {{QStringLiteral("type"), QStringLiteral("content_block_delta")},
                          {QStringLiteral("index"), m_index},
                          {QStringLiteral("delta"), block(QStringLiteral("input_json_delta"),
                                                          {{QStringLiteral("partial_json"), json}})}});
    out += sseNamedEvent(QStringLiteral("content_block_stop"),
                         {{QStringLiteral("type"), QStringLiteral("content_block_stop")}, {QStringLiteral("index"), m_index}});
    ++m_index;
    return out;
}

QByteArray MessagesDialect::streamDelta(const QJsonObject &delta)
{
    QByteArray out;
    const QString reasoning = delta.value(QStringLiteral("reasoning_content")).toString();
    if (!reasoning.isEmpty()) {
        out += openBlock(Open::Thinking);
        m_thinking += reasoning;
        out += sseNamedEvent(QStringLiteral("content_block_delta"),
                             {{QStringLiteral("type"), QStringLiteral("content_block_delta")},
                              {QStringLiteral("index"), m_index},
                              {QStringLiteral("delta"), block(QStringLiteral("thinking_delta"),
                                                              {{QStringLiteral("thinking"), reasoning}})}});
    }
    const QString content = delta.value(QStringLiteral("content")).toString();
    if (!content.isEmpty()) {
        out += openBlock(Open::Text);
        out += sseNamedEvent(QStringLiteral("content_block_delta"),
                             {{QStringLiteral("type"), QStringLiteral("content_block_delta")},
                              {QStringLiteral("index"), m_index},
                              {QStringLiteral("delta"), block(QStringLiteral("text_delta"), {{QStringLiteral("text"), content}})}});
    }
    for (const QJsonValue &call : delta.value(QStringLiteral("tool_calls")).toArray())
        out += toolUse(call.toObject());
    return out;
}

QByteArray MessagesDialect::streamEnd(const ParsedReply &reply, const ReplyEnd &end)
{
    QByteArray out;
    // A reply with no block at all still carries one (empty) text block, as the whole one does.
    if (m_index == 0 && m_open == Open::None)
        out += openBlock(Open::Text);
    out += closeBlock();
    const auto [reason, sequence] = stopOf(reply, end);
    out += sseNamedEvent(QStringLiteral("message_delta"),
                         {{QStringLiteral("type"), QStringLiteral("message_delta")},
                          {QStringLiteral("delta"), QJsonObject{{QStringLiteral("stop_reason"), reason},
                                                                {QStringLiteral("stop_sequence"), sequence}}},
                          {QStringLiteral("usage"), QJsonObject{{QStringLiteral("output_tokens"), end.completionTokens}}}});
    return out + sseNamedEvent(QStringLiteral("message_stop"), {{QStringLiteral("type"), QStringLiteral("message_stop")}});
}

QByteArray MessagesDialect::streamError(const ApiError &error)
{
    return closeBlock() + sseNamedEvent(QStringLiteral("error"), anthropic::errorBody(error));
}
