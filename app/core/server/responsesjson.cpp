#include "server/responsesjson.h"

#include "server/responsestore.h"

#include <QUuid>

namespace {

// OpenAI's ids are a prefix, an underscore and an opaque token.
QString newItemId(const QString &prefix)
{
    return prefix + QLatin1Char('_') + QUuid::createUuid().toString(QUuid::Id128);
}

QJsonObject reasoningPart(const QString &text)
{
    return {{QStringLiteral("type"), QStringLiteral("reasoning_text")}, {QStringLiteral("text"), text}};
}

QJsonObject textPart(const QString &text)
{
    return {{QStringLiteral("type"), QStringLiteral("output_text")},
            {QStringLiteral("text"), text},
            {QStringLiteral("annotations"), QJsonArray{}},
            {QStringLiteral("logprobs"), QJsonArray{}}};
}

QJsonObject reasoningItem(const QString &id, const QJsonArray &content, const QString &status)
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("type"), QStringLiteral("reasoning")},
            {QStringLiteral("status"), status},
            {QStringLiteral("summary"), QJsonArray{}},
            {QStringLiteral("content"), content}};
}

QJsonObject messageItem(const QString &id, const QJsonArray &content, const QString &status)
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("type"), QStringLiteral("message")},
            {QStringLiteral("status"), status},
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("content"), content}};
}

QJsonObject callItem(const QString &id, const QString &callId, const QString &name, const QString &arguments,
                     const QString &status)
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("type"), QStringLiteral("function_call")},
            {QStringLiteral("status"), status},
            {QStringLiteral("call_id"), callId},
            {QStringLiteral("name"), name},
            {QStringLiteral("arguments"), arguments}};
}

// The job names the chat's "messages" for a prompt the engine refused; here that is "input".
ApiError inResponsesTerms(ApiError e)
{
    if (e.param.startsWith(QLatin1String("messages")))
        e.param = QStringLiteral("input");
    return e;
}

bool cutShort(waste::FinishReason r)
{
    return r == waste::FinishReason::Length || r == waste::FinishReason::ContextFull;
}

} // namespace

ResponsesDialect::ResponsesDialect(const ResponsesRequest &request, const QString &model, qint64 created,
                                   ResponseStore *store)
    : m_id(newItemId(QStringLiteral("resp"))), m_model(model), m_created(created), m_echo(request.echo),
      m_conversation(request.conversation), m_store(request.store), m_storeTo(store)
{
}

QJsonObject ResponsesDialect::response(const QString &status, const QJsonArray &output, const QJsonValue &usage) const
{
    QJsonObject o{{QStringLiteral("id"), m_id},
                  {QStringLiteral("object"), QStringLiteral("response")},
                  {QStringLiteral("created_at"), double(m_created)},
                  {QStringLiteral("status"), status},
                  {QStringLiteral("error"), QJsonValue(QJsonValue::Null)},
                  {QStringLiteral("incomplete_details"), QJsonValue(QJsonValue::Null)},
                  {QStringLiteral("model"), m_model},
                  {QStringLiteral("output"), output},
                  {QStringLiteral("truncation"), QStringLiteral("disabled")},
                  {QStringLiteral("usage"), usage}};
    for (auto it = m_echo.constBegin(); it != m_echo.constEnd(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

QByteArray ResponsesDialect::event(const QString &type, QJsonObject payload)
{
    payload.insert(QStringLiteral("type"), type);
    payload.insert(QStringLiteral("sequence_number"), m_sequence++);
    return sseNamedEvent(type, payload);
}

QByteArray ResponsesDialect::streamStart(int)
{
    const QJsonObject r = response(QStringLiteral("in_progress"), {}, QJsonValue(QJsonValue::Null));
    // Two statements: the events are numbered in the order they are written.
    QByteArray out = event(QStringLiteral("response.created"), {{QStringLiteral("response"), r}});
    out += event(QStringLiteral("response.in_progress"), {{QStringLiteral("response"), r}});
    return out;
}

QByteArray ResponsesDialect::openItem(Open kind)
{
    if (m_open == kind)
        return {};
    QByteArray out = closeItem();
    m_open = kind;
    m_text.clear();
    const int index = int(m_output.size());
    QJsonObject item;
    QJsonObject part;
    if (kind == Open::Reasoning) {
        m_itemId = newItemId(QStringLiteral("rs"));
        item = reasoningItem(m_itemId, {}, QStringLiteral("in_progress"));
        part = reasoningPart(QString());
    } else {
        m_itemId = newItemId(QStringLiteral("msg"));
        item = messageItem(m_itemId, {}, QStringLiteral("in_progress"));
        part = textPart(QString());
    }
    out += event(QStringLiteral("response.output_item.added"),
                 {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
    out += event(QStringLiteral("response.content_part.added"),
                 {{QStringLiteral("item_id"), m_itemId},
                  {QStringLiteral("output_index"), index},
                  {QStringLiteral("content_index"), 0},
                  {QStringLiteral("part"), part}});
    return out;
}

QByteArray ResponsesDialect::closeItem()
{
    if (m_open == Open::None)
        return {};
    const bool reasoning = m_open == Open::Reasoning;
    m_open = Open::None;
    const int index = int(m_output.size());
    const QJsonObject part = reasoning ? reasoningPart(m_text) : textPart(m_text);
    QJsonObject done{{QStringLiteral("item_id"), m_itemId},
                     {QStringLiteral("output_index"), index},
                     {QStringLiteral("content_index"), 0},
                     {QStringLiteral("text"), m_text}};
    if (!reasoning)
        done.insert(QStringLiteral("logprobs"), QJsonArray{});
    QByteArray out = event(reasoning ? QStringLiteral("response.reasoning_text.done")
                                     : QStringLiteral("response.output_text.done"),
                           done);
    out += event(QStringLiteral("response.content_part.done"),
                 {{QStringLiteral("item_id"), m_itemId},
                  {QStringLiteral("output_index"), index},
                  {QStringLiteral("content_index"), 0},
                  {QStringLiteral("part"), part}});
    const QJsonObject item = reasoning ? reasoningItem(m_itemId, {part}, QStringLiteral("completed"))
                                       : messageItem(m_itemId, {part}, QStringLiteral("completed"));
    out += event(QStringLiteral("response.output_item.done"),
                 {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
    m_output.append(item);
    return out;
}

QByteArray ResponsesDialect::functionCall(const QJsonObject &call)
{
    QByteArray out = closeItem();
    const int index = int(m_output.size());
    const QString id = newItemId(QStringLiteral("fc"));
    const QJsonObject fn = call.value(QStringLiteral("function")).toObject();
    const QString name = fn.value(QStringLiteral("name")).toString();
    const QString args = fn.value(QStringLiteral("arguments")).toString();
    const QString callId = call.value(QStringLiteral("id")).toString();
    out += event(QStringLiteral("response.output_item.added"),
                 {{QStringLiteral("output_index"), index},
                  {QStringLiteral("item"), callItem(id, callId, name, QString(), QStringLiteral("in_progress"))}});
    // The assembler hands over a call once it is whole: its arguments go out as one delta.
    out += event(QStringLiteral("response.function_call_arguments.delta"),
                 {{QStringLiteral("item_id"), id}, {QStringLiteral("output_index"), index}, {QStringLiteral("delta"), args}});
    out += event(QStringLiteral("response.function_call_arguments.done"),
                 {{QStringLiteral("item_id"), id},
                  {QStringLiteral("output_index"), index},
                  {QStringLiteral("name"), name},
                  {QStringLiteral("arguments"), args}});
    const QJsonObject item = callItem(id, callId, name, args, QStringLiteral("completed"));
    out += event(QStringLiteral("response.output_item.done"),
                 {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
    m_output.append(item);
    return out;
}

QByteArray ResponsesDialect::streamDelta(const QJsonObject &delta)
{
    QByteArray out;
    const QString reasoning = delta.value(QStringLiteral("reasoning_content")).toString();
    if (!reasoning.isEmpty()) {
        out += openItem(Open::Reasoning);
        m_text += reasoning;
        out += event(QStringLiteral("response.reasoning_text.delta"),
                     {{QStringLiteral("item_id"), m_itemId},
                      {QStringLiteral("output_index"), int(m_output.size())},
                      {QStringLiteral("content_index"), 0},
                      {QStringLiteral("delta"), reasoning}});
    }
    const QString content = delta.value(QStringLiteral("content")).toString();
    if (!content.isEmpty()) {
        out += openItem(Open::Message);
        m_text += content;
        out += event(QStringLiteral("response.output_text.delta"),
                     {{QStringLiteral("item_id"), m_itemId},
                      {QStringLiteral("output_index"), int(m_output.size())},
                      {QStringLiteral("content_index"), 0},
                      {QStringLiteral("delta"), content},
                      {QStringLiteral("logprobs"), QJsonArray{}}});
    }
    for (const QJsonValue &call : delta.value(QStringLiteral("tool_calls")).toArray())
        out += functionCall(call.toObject());
    return out;
}

QJsonObject ResponsesDialect::usageJson(const ReplyEnd &end) const
{
    return {{QStringLiteral("input_tokens"), end.promptTokens},
            {QStringLiteral("input_tokens_details"), QJsonObject{{QStringLiteral("cached_tokens"), end.cachedTokens}}},
            {QStringLiteral("output_tokens"), end.completionTokens},
            {QStringLiteral("output_tokens_details"), QJsonObject{{QStringLiteral("reasoning_tokens"), end.reasoningTokens}}},
            {QStringLiteral("total_tokens"), end.promptTokens + end.completionTokens}};
}

QJsonObject ResponsesDialect::finalResponse(const QJsonArray &output, const ReplyEnd &end)
{
    const bool incomplete = cutShort(end.reason);
    QJsonObject r = response(incomplete ? QStringLiteral("incomplete") : QStringLiteral("completed"), output,
                             usageJson(end));
    if (incomplete)
        r.insert(QStringLiteral("incomplete_details"),
                 QJsonObject{{QStringLiteral("reason"), QStringLiteral("max_output_tokens")}});
    if (m_store && m_storeTo) {
        QJsonArray kept = m_conversation;
        for (const QJsonValue &item : output)
            kept.append(item);
        m_storeTo->put(m_id, kept, r);
    }
    return r;
}

QByteArray ResponsesDialect::streamEnd(const ParsedReply &, const ReplyEnd &end)
{
    QByteArray out;
    // A reply with nothing in it still has its (empty) message, as the whole one does.
    if (m_output.isEmpty() && m_open == Open::None)
        out += openItem(Open::Message);
    out += closeItem();
    const QJsonObject r = finalResponse(m_output, end);
    const bool incomplete = cutShort(end.reason);
    return out + event(incomplete ? QStringLiteral("response.incomplete") : QStringLiteral("response.completed"),
                       {{QStringLiteral("response"), r}});
}

QJsonObject ResponsesDialect::body(const ParsedReply &reply, const ReplyEnd &end)
{
    QJsonArray output;
    if (!reply.reasoning.isEmpty())
        output.append(reasoningItem(newItemId(QStringLiteral("rs")), {reasoningPart(reply.reasoning)},
                                    QStringLiteral("completed")));
    // An empty answer is an empty message only when nothing else came, as in the stream.
    if (!reply.content.isEmpty() || (output.isEmpty() && reply.toolCalls.isEmpty()))
        output.append(messageItem(newItemId(QStringLiteral("msg")), {textPart(reply.content)}, QStringLiteral("completed")));
    for (const ToolCall &c : reply.toolCalls)
        output.append(callItem(newItemId(QStringLiteral("fc")), c.id, c.name, c.arguments, QStringLiteral("completed")));
    return finalResponse(output, end);
}

QJsonObject ResponsesDialect::errorBody(const ApiError &error) const
{
    return inResponsesTerms(error).toJson();
}

QByteArray ResponsesDialect::streamError(const ApiError &failure)
{
    const ApiError error = inResponsesTerms(failure);
    QByteArray out = closeItem();
    const QJsonValue code = error.code.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(error.code);
    out += event(QStringLiteral("error"), {{QStringLiteral("code"), code},
                                           {QStringLiteral("message"), error.message},
                                           {QStringLiteral("param"), error.param.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                                                           : QJsonValue(error.param)}});
    QJsonObject r = response(QStringLiteral("failed"), m_output, QJsonValue(QJsonValue::Null));
    r.insert(QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), error.code.isEmpty() ? QStringLiteral("server_error")
                                                                                                : error.code},
                                                  {QStringLiteral("message"), error.message}});
    return out + event(QStringLiteral("response.failed"), {{QStringLiteral("response"), r}});
}
