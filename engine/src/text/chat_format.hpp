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

// The text of the container's chat_template.jinja (the release's chat_template, which the
// converter copies from tokenizer_config.json); empty when it has none.
std::string chatTemplateText(const std::string &containerDir);

// Which release's template a DeepSeek-V3 or Kimi K2 family chat_template is, read from
// what each release's Jinja does (the tests check them on the releases' own files):
//   - DeepSeekV31 when it reads a `thinking` switch (V3.1's; R1 and V3 have none);
//   - KimiK2Instruct when it writes no <think> (K2-Instruct's; K2-Thinking and K2.5 do);
//   - Glm47 when its tools instructions write a call on one line (GLM-4.7's; 4.5 and 4.6
//     put each tag on its own line);
//   - otherwise the family's default format (DeepSeek: R1's; KimiK2: K2-Thinking's),
//     which an empty template also gets.
ChatFormat familyTemplateVariant(ChatFormat family, std::string_view templateText);

// K3 for a kimi-k3 container whose vocabulary has K3's markup; DeepSeek, KimiK2 or Qwen3
// for a deepseek-v3, kimi-k2 or qwen3-moe/qwen3-next container whose vocabulary has that
// family's markup (DeepSeekV31 or KimiK2Instruct as familyTemplateVariant reads
// `templateText`); Harmony for a gpt-oss container with <|channel|>; Glm45 for a glm4-moe
// container with <|assistant|> (Glm47 as familyTemplateVariant reads it); Qwen35 for a
// qwen3.5-moe container with <|im_start|>; DeepSeekV32 for a deepseek-v32 container with
// DeepSeek's markup and no chat template (with one, as familyTemplateVariant reads it);
// DeepSeekV4 for a deepseek-v4 container with that markup; otherwise ChatMl when
// the container ships a chat template; otherwise Plain. `tok` may be null (no tokenizer).
ChatFormat decideChatFormat(std::string_view arch, const Tokenizer *tok, bool hasChatTemplate,
                            std::string_view templateText = {});

} // namespace waste::text
