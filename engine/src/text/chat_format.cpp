#include "text/chat_format.hpp"

#include "format/file.hpp"
#include "text/deepseek_markers.hpp"
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

std::string chatTemplateText(const std::string &containerDir)
{
    const std::string path = containerDir + "/chat_template.jinja";
    return format::fileExists(path) ? format::readWholeFile(path, int64_t(4) << 20) : std::string();
}

ChatFormat familyTemplateVariant(ChatFormat family, std::string_view templateText)
{
    if (templateText.empty())
        return family;
    if (family == ChatFormat::DeepSeek && templateText.find("thinking") != std::string_view::npos)
        return ChatFormat::DeepSeekV31;
    if (family == ChatFormat::KimiK2 && templateText.find("<think>") == std::string_view::npos)
        return ChatFormat::KimiK2Instruct;
    // GLM-4.7's (and GLM-5's) tools instructions show a call on one line; 4.5's and 4.6's
    // put each tag on its own line.
    if (family == ChatFormat::Glm45 && templateText.find("<tool_call>{function-name}<arg_key>") != std::string_view::npos)
        return ChatFormat::Glm47;
    return family;
}

ChatFormat decideChatFormat(std::string_view arch, const Tokenizer *tok, bool hasChatTemplate,
                            std::string_view templateText)
{
    if (arch == "kimi-k3" && tok && hasK3Markup(*tok))
        return ChatFormat::K3;
    // The family formats need the family's markup in the vocabulary (one marker each).
    if (arch == "deepseek-v3" && tok && tok->specialId(deepseek::kUser) >= 0)
        return familyTemplateVariant(ChatFormat::DeepSeek, templateText);
    if (arch == "kimi-k2" && tok && tok->specialId("<|im_middle|>") >= 0)
        return familyTemplateVariant(ChatFormat::KimiK2, templateText);
    if ((arch == "qwen3-moe" || arch == "qwen3-next") && tok && tok->specialId("<|im_start|>") >= 0)
        return ChatFormat::Qwen3;
    if (arch == "gpt-oss" && tok && tok->specialId("<|channel|>") >= 0)
        return ChatFormat::Harmony;
    if (arch == "glm4-moe" && tok && tok->specialId("<|assistant|>") >= 0)
        return familyTemplateVariant(ChatFormat::Glm45, templateText);
    // GLM-5.x write GLM-4.7's layout (docs/architectures/dsa.md) unless their template is
    // GLM-4.5's (a call's tags on their own lines).
    if (arch == "glm-moe-dsa" && tok && tok->specialId("<|assistant|>") >= 0)
        return templateText.find("<tool_call>{function-name}\n") != std::string_view::npos ? ChatFormat::Glm45
                                                                                           : ChatFormat::Glm47;
    if (arch == "qwen3.5-moe" && tok && tok->specialId("<|im_start|>") >= 0)
        return ChatFormat::Qwen35;
    // DeepSeek-V3.2 and V4 ship no Jinja template: their releases encode in Python
    // (encoding_dsv32.py, encoding_dsv4.py). V3.2-Exp shipped a V3.1-style one, which is read
    // as such.
    if (arch == "deepseek-v32" && tok && tok->specialId(deepseek::kUser) >= 0)
        return templateText.empty() ? ChatFormat::DeepSeekV32 : familyTemplateVariant(ChatFormat::DeepSeek, templateText);
    if (arch == "deepseek-v4" && tok && tok->specialId(deepseek::kUser) >= 0)
        return ChatFormat::DeepSeekV4;
    return hasChatTemplate ? ChatFormat::ChatMl : ChatFormat::Plain;
}

} // namespace waste::text
