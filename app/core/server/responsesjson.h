// The Responses API's reply (POST /v1/responses): the response object with its output items
// (reasoning, message with output_text, function_call), and the stream of typed events
// OpenAI documents, each with its sequence_number:
//   response.created, response.in_progress,
//   per item: response.output_item.added,
//     message:   response.content_part.added, response.output_text.delta...,
//                response.output_text.done, response.content_part.done,
//     reasoning: response.content_part.added, response.reasoning_text.delta...,
//                response.reasoning_text.done, response.content_part.done,
//     function_call: response.function_call_arguments.delta, ...arguments.done,
//   response.output_item.done; then response.completed (or response.incomplete when the
//   token limit cut it, response.failed after an "error" event).
// A finished response is kept in the ResponseStore (unless store is false) with the
// conversation that led to it, for previous_response_id.
#pragma once

#include "server/replydialect.h"
#include "server/responsesrequest.h"

#include <QJsonArray>

class ResponseStore;

class ResponsesDialect : public ReplyDialect {
public:
    // `store` may be null (nothing kept); `created` in seconds since the epoch.
    ResponsesDialect(const ResponsesRequest &request, const QString &model, qint64 created, ResponseStore *store);

    QString id() const override { return m_id; }
    QByteArray streamStart(int promptTokens) override;
    QByteArray streamDelta(const QJsonObject &delta) override;
    QByteArray streamEnd(const ParsedReply &reply, const ReplyEnd &end) override;
    QJsonObject body(const ParsedReply &reply, const ReplyEnd &end) override;
    QJsonObject errorBody(const ApiError &error) const override;
    QByteArray streamError(const ApiError &error) override;

    // The response object: status in_progress / completed / incomplete / failed.
    QJsonObject response(const QString &status, const QJsonArray &output, const QJsonValue &usage) const;

private:
    enum class Open { None, Reasoning, Message };
    QByteArray event(const QString &type, QJsonObject payload);
    QByteArray openItem(Open kind);
    QByteArray closeItem();
    QByteArray functionCall(const QJsonObject &call);
    QJsonObject usageJson(const ReplyEnd &end) const;
    // The end: status, usage and the stored conversation.
    QJsonObject finalResponse(const QJsonArray &output, const ReplyEnd &end);

    QString m_id;
    QString m_model;
    qint64 m_created;
    QJsonObject m_echo;
    QJsonArray m_conversation;
    bool m_store;
    ResponseStore *m_storeTo;

    int m_sequence = 0;
    QJsonArray m_output; // items as the stream closed them
    Open m_open = Open::None;
    QString m_itemId;
    QString m_text; // the open item's text so far
};
