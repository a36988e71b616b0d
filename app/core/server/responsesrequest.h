// A request to OpenAI's Responses API (POST /v1/responses), checked field by field and
// translated into the Chat Completions request the rest of the server runs (one chat layer:
// rendering, constraints, reply assembly and the job lifecycle are shared). Input items
// (messages with input_text / input_image, function_call, function_call_output, reasoning)
// become chat messages; `instructions` a system message; flat function tools, tool_choice,
// text.format and reasoning.effort their chat spellings. Every problem is an ApiError (400)
// naming the Responses field.
#pragma once

#include "server/apirequest.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <functional>
#include <optional>

struct ResponsesRequest {
    ApiRequest chat;          // the same request as Chat Completions sees it
    QJsonArray conversation;  // the earlier response's items, then this request's input items (normalised)
    QString previousResponseId;
    bool store = true;
    // The request's settings as the response object repeats them: instructions,
    // max_output_tokens, temperature, top_p, tools, tool_choice, text, reasoning, metadata,
    // parallel_tool_calls.
    QJsonObject echo;
};

// Finds the conversation a stored response ended with (nullopt: none by that id).
using ResponseLookup = std::function<std::optional<QJsonArray>(const QString &id)>;

ResponsesRequest parseResponsesRequest(const QJsonObject &body, const ResponseLookup &lookup,
                                       const ParseOptions &options = {});

// The chat messages for a list of Responses items (instructions first when given); exposed
// for tests. Throws ApiError naming `path`[i] for an item it cannot read.
QJsonArray responsesItemsToChat(const QJsonArray &items, const QString &instructions);
