// Anthropic's Messages API reply (POST /v1/messages): the message object with its content
// blocks (thinking, text, tool_use), stop_reason end_turn / max_tokens / stop_sequence /
// tool_use, usage; the stream of named events message_start, ping, content_block_start /
// content_block_delta (text_delta, thinking_delta, signature_delta, input_json_delta) /
// content_block_stop, message_delta, message_stop; and errors as
// {"type":"error","error":{"type","message"}} with Anthropic's types for each status.
#pragma once

#include "server/replydialect.h"

#include <QStringList>

namespace anthropic {

// invalid_request_error (400), authentication_error (401), permission_error (403),
// not_found_error (404), request_too_large (413), rate_limit_error (429), api_error (500),
// overloaded_error (503, 529).
QString errorType(int status);
QJsonObject errorBody(const ApiError &error);
// The stop sequence that ended a reply: the first of `stops` that follows the reply's
// content in the model's raw output (the engine cuts it from the content). Empty if none.
QString matchedStopSequence(const QString &rawText, const QString &content, const QStringList &stops);
// "toolu_..." for a tool call id of the reply assembler's ("call_...").
QString toolUseId(const QString &callId);

} // namespace anthropic

class MessagesDialect : public ReplyDialect {
public:
    MessagesDialect(const QString &model, const QStringList &stopSequences);

    QString id() const override { return m_id; }
    QByteArray streamKeepAlive() const override;
    QByteArray streamStart(int promptTokens) override;
    QByteArray streamDelta(const QJsonObject &delta) override;
    QByteArray streamEnd(const ParsedReply &reply, const ReplyEnd &end) override;
    QJsonObject body(const ParsedReply &reply, const ReplyEnd &end) override;
    QJsonObject errorBody(const ApiError &error) const override { return anthropic::errorBody(error); }
    QByteArray streamError(const ApiError &error) override;

private:
    enum class Open { None, Thinking, Text };
    QByteArray openBlock(Open kind);
    QByteArray closeBlock();
    QByteArray toolUse(const QJsonObject &call);
    // stop_reason and stop_sequence for an end.
    QPair<QString, QJsonValue> stopOf(const ParsedReply &reply, const ReplyEnd &end) const;
    QJsonObject usageJson(int promptTokens, int cachedTokens, int outputTokens) const;

    QString m_id;
    QString m_model;
    QStringList m_stops;
    int m_index = 0; // the next content block's index
    Open m_open = Open::None;
    QString m_thinking; // the open thinking block's text, for its signature
};
