// ReplyDialect: how one chat API other than Chat Completions (OpenAI's Responses, Anthropic's
// Messages) writes a reply. The job lifecycle (apiserverjobs.cpp) and the reply assembly
// (replyassembler.h) are the Chat Completions ones: every API's request becomes the same
// ApiRequest, the assembler turns the model's parsed reply into Chat Completions deltas
// ({"reasoning_content", "content", "tool_calls"}), and a dialect only re-shapes those deltas
// and the end into its own JSON and stream events.
#pragma once

#include "server/apierror.h"
#include "server/openaijson.h"
#include "server/parsedreply.h"

#include <waste/waste.hpp>

#include <QByteArray>
#include <QJsonObject>
#include <QString>

// How a generation ended, in the terms every dialect needs.
struct ReplyEnd {
    waste::FinishReason reason = waste::FinishReason::Stop;
    QString rawText; // the model's whole output (Messages reads which stop sequence ended it)
    int promptTokens = 0;
    int completionTokens = 0;
    int cachedTokens = 0; // prompt tokens already in the engine's state
    int reasoningTokens = 0; // of the completion tokens, those spent reasoning
};

class ReplyDialect {
public:
    virtual ~ReplyDialect() = default;

    // The id the reply carries ("resp_...", "msg_...").
    virtual QString id() const = 0;

    // Stream events, already framed for SSE: those that open the stream, those for one
    // assembler delta, and those that close it.
    virtual QByteArray streamStart(int promptTokens) = 0;
    virtual QByteArray streamDelta(const QJsonObject &delta) = 0;
    virtual QByteArray streamEnd(const ParsedReply &reply, const ReplyEnd &end) = 0;
    // The whole reply when the client did not ask for a stream.
    virtual QJsonObject body(const ParsedReply &reply, const ReplyEnd &end) = 0;

    // An error as this API writes it: the body of an HTTP error, and the events that end a
    // stream already begun.
    virtual QJsonObject errorBody(const ApiError &error) const = 0;
    virtual QByteArray streamError(const ApiError &error) = 0;
    // What keeps a quiet stream alive (a long prompt being read): an SSE comment, which every
    // SSE reader skips; Messages sends its own ping event, as Anthropic's API does.
    virtual QByteArray streamKeepAlive() const { return openai::sseKeepAlive(); }
};

// One named Server-Sent Event: "event: <name>\ndata: <compact json>\n\n" (both APIs name
// their events; Anthropic's SDK dispatches on the name).
QByteArray sseNamedEvent(const QString &name, const QJsonObject &payload);
