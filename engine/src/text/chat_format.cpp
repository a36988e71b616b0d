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
    return hasChatTemplate ? ChatFormat::ChatMl : ChatFormat::Plain;
}

} // namespace waste::text
