// The generic chat format for containers without K3's markup: ChatML
// (<|im_start|>role\n ... <|im_end|>\n), tools declared in a system message and
// calls written as <tool_call>{"name": ..., "arguments": {...}}</tool_call>, a
// common convention models of this family were trained on. The markers are markup
// segments: they become special tokens when the vocabulary has them, and ordinary
// text otherwise.
#pragma once

#include "text/chat_reply.hpp"
#include "text/chat_segments.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

Segments renderChatMl(const nlohmann::ordered_json &request);

// Splits a finished ChatML reply: a leading <think>...</think> is reasoning,
// <tool_call> blocks are tool calls, the rest is content.
ChatReply parseChatMlReply(std::string_view text);

} // namespace waste::text
