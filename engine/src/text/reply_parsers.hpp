// The one choice of reply parser per chat format, used by Model::replyParser (chat,
// `waste run` and the API server alike) and by tests that read frames back without a model.
#pragma once

#include "text/chat_reply.hpp"
#include "waste/chat.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace waste::text {

class Tokenizer;

// The parser of a reply to `prompt` in `format`; `tok` must outlive it:
//   - K3: K3OutputParser, starting in the channel the prompt opened;
//   - DeepSeek, DeepSeekV31, KimiK2, KimiK2Instruct: FamilyReplyParser (V3.1's call
//     layout and R1's both), in <think> when the prompt ends with it;
//   - Qwen3, ChatMl, Plain: TextReplyParser, in <think> when the prompt ends inside it.
std::unique_ptr<ReplyParser> replyParserFor(ChatFormat format, const Tokenizer &tok, std::span<const int32_t> prompt);

} // namespace waste::text
