#include "text/chat_format.hpp"

#include "format/file.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

bool hasK3Markup(const Tokenizer &tok)
{
    for (const char *s : {"<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"})
        if (tok.specialId(s) < 0)
            return false;
    return true;
}

bool hasChatTemplateFile(const std::string &containerDir)
{
    return format::fileExists(containerDir + "/chat.json") || format::fileExists(containerDir + "/chat_template.jinja");
}

ChatFormat decideChatFormat(std::string_view arch, const Tokenizer *tok, bool hasChatTemplate)
{
    if (arch == "kimi-k3" && tok && hasK3Markup(*tok))
        return ChatFormat::K3;
    // The family formats need the family's markup in the vocabulary (one marker each).
    if (arch == "deepseek-v3" && tok && tok->specialId("<\xEF\xBD\x9CUser\xEF\xBD\x9C>") >= 0)
        return ChatFormat::DeepSeek;
    if (arch == "kimi-k2" && tok && tok->specialId("<|im_middle|>") >= 0)
        return ChatFormat::KimiK2;
    if ((arch == "qwen3-moe" || arch == "qwen3-next") && tok && tok->specialId("<|im_start|>") >= 0)
        return ChatFormat::Qwen3;
    if (arch == "gpt-oss" && tok && tok->specialId("<|channel|>") >= 0)
        return ChatFormat::Harmony;
    return hasChatTemplate ? ChatFormat::ChatMl : ChatFormat::Plain;
}

} // namespace waste::text
