// A request to Anthropic's Messages API (POST /v1/messages, POST /v1/messages/count_tokens),
// checked field by field and translated into the Chat Completions request the rest of the
// server runs (one chat layer). `system` (string or text blocks) becomes a system message;
// text, image (base64), tool_use, tool_result and thinking blocks become chat parts, tool
// calls, tool messages and reasoning; tools with input_schema, tool_choice auto / any / tool
// / none, stop_sequences and thinking their chat spellings. Thinking is off unless the
// request enables it, as Anthropic's models do. Every problem is an ApiError (400) naming the
// Messages field; Anthropic's error shape is messagesjson.h's.
#pragma once

#include "server/apirequest.h"

#include <QJsonObject>

struct MessagesRequest {
    ApiRequest chat; // the same request as Chat Completions sees it
};

// countOnly: a count_tokens body, which has no max_tokens.
MessagesRequest parseMessagesRequest(const QJsonObject &body, const ParseOptions &options = {},
                                     bool countOnly = false);
