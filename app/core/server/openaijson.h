// The JSON shapes of OpenAI's API that this server answers with, and their SSE framing.
#pragma once

#include "server/parsedreply.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QVariantMap>

struct GenerationStats;

namespace openai {

// "chatcmpl-<hex>" / "cmpl-<hex>"
QString newId(const QString &prefix);
// A tool call's id.
QString newCallId();

// cachedTokens >= 0 adds prompt_tokens_details.cached_tokens: prompt tokens the engine
// did not read again (its state or a checkpoint held them). reasoningTokens >= 0 adds
// completion_tokens_details.reasoning_tokens: the completion tokens spent reasoning.
QJsonObject usage(int promptTokens, int completionTokens, int cachedTokens = -1, int reasoningTokens = -1);
// WASTE's own figures for one generation, under the top-level "waste" key.
QJsonObject wasteStats(const GenerationStats &stats, qint64 ms);

// withIndex: stream deltas number calls from firstIndex (their place in the whole reply).
QJsonArray toolCallsJson(const QList<ToolCall> &calls, bool withIndex, int firstIndex = 0);

// Non-streaming replies.
QJsonObject chatCompletion(const QString &id, qint64 created, const QString &model, const ParsedReply &reply,
                           const QString &finishReason, const QJsonObject &usage);
QJsonObject textCompletion(const QString &id, qint64 created, const QString &model, const QString &text,
                           const QString &finishReason, const QJsonObject &usage);

// Streaming chunks. finishReason empty: null. usageNull adds "usage": null (include_usage).
QJsonObject chatChunk(const QString &id, qint64 created, const QString &model, const QJsonObject &delta,
                      const QString &finishReason, bool usageNull);
QJsonObject textChunk(const QString &id, qint64 created, const QString &model, const QString &text,
                      const QString &finishReason, bool usageNull);
// The last chunk when include_usage is set: no choices, the usage.
QJsonObject usageChunk(const QString &object, const QString &id, qint64 created, const QString &model,
                       const QJsonObject &usage);

// /v1/models entries.
QJsonObject modelObject(const QString &id, qint64 created, const QVariantMap &info);

// Server-Sent Events: "data: <compact json>\n\n" and the terminating "data: [DONE]\n\n".
QByteArray sseEvent(const QJsonObject &payload);
// An SSE comment line, which SSE readers skip: what keeps a quiet stream open.
inline QByteArray sseKeepAlive() { return QByteArrayLiteral(": reading the prompt\n\n"); }
QByteArray sseDone();
// One HTTP/1.1 chunk: "<hex size>\r\n<payload>\r\n"; the empty payload is the last chunk.
QByteArray httpChunk(const QByteArray &payload);

} // namespace openai
