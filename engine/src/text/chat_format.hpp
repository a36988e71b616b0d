// The one rule that decides a container's chat format (waste::ChatFormat, waste/chat.hpp):
// Model::open reports it in ModelInfo::chatFormat, containerChatFormat() reads it without
// weights, and the reply parser and constraints follow it.
#pragma once

#include "waste/chat.hpp"

#include <string>
#include <string_view>

namespace waste::text {

class Tokenizer;

// Whether the vocabulary has K3's markup specials (<|open|>, <|close|>, <|sep|>, <|end_of_msg|>).
bool hasK3Markup(const Tokenizer &tok);

// Whether the container directory ships a chat template (chat.json or chat_template.jinja).
bool hasChatTemplateFile(const std::string &containerDir);

// K3 for a kimi-k3 container whose vocabulary has K3's markup; DeepSeek, KimiK2 or Qwen3
// for a deepseek-v3, kimi-k2 or qwen3-moe/qwen3-next container whose vocabulary has that
// family's markup; Harmony for a gpt-oss container with <|channel|>; otherwise ChatMl when the container ships a chat template; otherwise Plain. `tok` may be null (no tokenizer).
ChatFormat decideChatFormat(std::string_view arch, const Tokenizer *tok, bool hasChatTemplate);

} // namespace waste::text
