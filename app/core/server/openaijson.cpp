#include "server/openaijson.h"

#include "generation/generationtypes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>

namespace openai {

static QString randomHex(int digits)
{
    QString hex;
    for (int i = 0; i < digits; ++i)
        hex += QLatin1Char("0123456789abcdef"[QRandomGenerator::global()->bounded(16)]);
    return hex;
}

QString newId(const QString &prefix)
{
    return prefix + QLatin1Char('-') + randomHex(24);
}

QString newCallId()
{
    return QStringLiteral("call_") + randomHex(24); // OpenAI's own form
}

QJsonObject usage(int promptTokens, int completionTokens, int cachedTokens, int reasoningTokens)
{
    QJsonObject o{{QStringLiteral("prompt_tokens"), promptTokens},
                  {QStringLiteral("completion_tokens"), completionTokens},
                  {QStringLiteral("total_tokens"), promptTokens + completionTokens}};
    if (cachedTokens >= 0)
        o.insert(QStringLiteral("prompt_tokens_details"), QJsonObject{{QStringLiteral("cached_tokens"), cachedTokens}});
    if (reasoningTokens >= 0)
        o.insert(QStringLiteral("completion_tokens_details"), QJsonObject{{QStringLiteral("reasoning_tokens"), reasoningTokens}});
    return o;
}

QJsonObject wasteStats(const GenerationStats &s, qint64 ms)
{
    return {{QStringLiteral("tokens_generated"), s.completionTokens},
            {QStringLiteral("prompt_tokens_reused"), s.reusedTokens},
            {QStringLiteral("expert_hit_rate"), s.hitRate},
            {QStringLiteral("bytes_read"), double(s.bytesRead)},
            {QStringLiteral("tokens_per_second"), s.tokensPerSecond},
            {QStringLiteral("ms"), double(ms)}};
}

QJsonArray toolCallsJson(const QList<ToolCall> &calls, bool withIndex, int firstIndex)
{
    QJsonArray arr;
    for (qsizetype i = 0; i < calls.size(); ++i) {
        QJsonObject c{{QStringLiteral("id"), calls[i].id},
                      {QStringLiteral("type"), QStringLiteral("function")},
                      {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), calls[i].name},
                                                               {QStringLiteral("arguments"), calls[i].arguments}}}};
        if (withIndex)
            c.insert(QStringLiteral("index"), firstIndex + int(i));
        arr.append(c);
    }
    return arr;
}

static QJsonValue reasonValue(const QString &finishReason)
{
    return finishReason.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(finishReason);
}

// The envelope every completion and chunk shares: one choice, the given object type.
// `usage` is added when it is an object, or as null when `usageNull` (stream chunks).
static QJsonObject envelope(const QString &id, const QString &object, qint64 created, const QString &model,
                     const QJsonObject &choice, const QJsonValue &usage)
{
    QJsonObject o{{QStringLiteral("id"), id},
                  {QStringLiteral("object"), object},
                  {QStringLiteral("created"), double(created)},
                  {QStringLiteral("model"), model},
                  {QStringLiteral("system_fingerprint"), QStringLiteral("waste-studio")},
                  {QStringLiteral("choices"), QJsonArray{choice}}};
    if (!usage.isUndefined())
        o.insert(QStringLiteral("usage"), usage);
    return o;
}

static QJsonObject choiceWith(const QString &key, const QJsonValue &value, const QString &finishReason)
{
    return {{QStringLiteral("index"), 0},
            {key, value},
            {QStringLiteral("logprobs"), QJsonValue(QJsonValue::Null)},
            {QStringLiteral("finish_reason"), reasonValue(finishReason)}};
}

QJsonObject chatCompletion(const QString &id, qint64 created, const QString &model, const ParsedReply &reply,
                           const QString &finishReason, const QJsonObject &usage)
{
    QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")}};
    if (reply.toolCalls.isEmpty() || !reply.content.isEmpty())
        message.insert(QStringLiteral("content"), reply.content);
    else
        message.insert(QStringLiteral("content"), QJsonValue(QJsonValue::Null));
    if (!reply.toolCalls.isEmpty())
        message.insert(QStringLiteral("tool_calls"), toolCallsJson(reply.toolCalls, false));
    if (!reply.reasoning.isEmpty())
        message.insert(QStringLiteral("reasoning_content"), reply.reasoning);
    return envelope(id, QStringLiteral("chat.completion"), created, model,
                    choiceWith(QStringLiteral("message"), message, finishReason), usage);
}

QJsonObject textCompletion(const QString &id, qint64 created, const QString &model, const QString &text,
                           const QString &finishReason, const QJsonObject &usage)
{
    return envelope(id, QStringLiteral("text_completion"), created, model,
                    choiceWith(QStringLiteral("text"), text, finishReason), usage);
}

QJsonObject chatChunk(const QString &id, qint64 created, const QString &model, const QJsonObject &delta,
                      const QString &finishReason, bool usageNull)
{
    return envelope(id, QStringLiteral("chat.completion.chunk"), created, model, choiceWith(QStringLiteral("delta"), delta, finishReason),
                    usageNull ? QJsonValue(QJsonValue::Null) : QJsonValue(QJsonValue::Undefined));
}

QJsonObject textChunk(const QString &id, qint64 created, const QString &model, const QString &text,
                      const QString &finishReason, bool usageNull)
{
    return envelope(id, QStringLiteral("text_completion"), created, model, choiceWith(QStringLiteral("text"), text, finishReason),
                    usageNull ? QJsonValue(QJsonValue::Null) : QJsonValue(QJsonValue::Undefined));
}

QJsonObject usageChunk(const QString &object, const QString &id, qint64 created, const QString &model,
                       const QJsonObject &usage)
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("object"), object},
            {QStringLiteral("created"), double(created)},
            {QStringLiteral("model"), model},
            {QStringLiteral("system_fingerprint"), QStringLiteral("waste-studio")},
            {QStringLiteral("choices"), QJsonArray{}},
            {QStringLiteral("usage"), usage}};
}

QJsonObject modelObject(const QString &id, qint64 created, const QVariantMap &info)
{
    QJsonObject details;
    for (auto it = info.cbegin(); it != info.cend(); ++it)
        details.insert(it.key(), QJsonValue::fromVariant(it.value()));
    return {{QStringLiteral("id"), id},
            {QStringLiteral("object"), QStringLiteral("model")},
            {QStringLiteral("created"), double(created)},
            {QStringLiteral("owned_by"), QStringLiteral("waste-studio")},
            {QStringLiteral("waste"), details}};
}

QByteArray sseEvent(const QJsonObject &payload)
{
    return "data: " + QJsonDocument(payload).toJson(QJsonDocument::Compact) + "\n\n";
}

QByteArray sseDone()
{
    return QByteArrayLiteral("data: [DONE]\n\n");
}

QByteArray httpChunk(const QByteArray &payload)
{
    return QByteArray::number(payload.size(), 16) + "\r\n" + payload + "\r\n";
}

} // namespace openai
