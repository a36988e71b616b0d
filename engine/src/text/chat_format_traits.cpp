// The public description of each chat format (waste/chat.hpp): its name, what a status line
// says of it, and the two facts a front end needs, written once here so that no front end
// branches on a format.
#include "waste/chat.hpp"

#include <array>
#include <cstddef>

namespace waste {

namespace {

struct Row {
    ChatFormat format;
    ChatFormatTraits traits;
};

// In ChatFormat's order of declaration.
constexpr std::array<Row, 14> kRows{{
    {ChatFormat::Plain, {"plain", "raw continuation (this container has no chat template)", false, false}},
    {ChatFormat::ChatMl, {"chatml", "ChatML chat template", true, false}},
    {ChatFormat::K3, {"k3", "K3 chat template", true, true}},
    {ChatFormat::DeepSeek, {"deepseek", "DeepSeek chat template", true, false}},
    {ChatFormat::KimiK2, {"kimi-k2", "Kimi K2 chat template", true, false}},
    {ChatFormat::Qwen3, {"qwen3", "Qwen3 chat template", true, false}},
    {ChatFormat::Harmony, {"harmony", "gpt-oss harmony chat format", true, false}},
    {ChatFormat::DeepSeekV31, {"deepseek-v3.1", "DeepSeek-V3.1 chat template", true, false}},
    {ChatFormat::KimiK2Instruct, {"kimi-k2-instruct", "Kimi K2-Instruct chat template", true, false}},
    {ChatFormat::Glm45, {"glm-4.5", "GLM-4.5 chat template", true, false}},
    {ChatFormat::Glm47, {"glm-4.7", "GLM-4.7 chat template", true, false}},
    {ChatFormat::Qwen35, {"qwen3.5", "Qwen3.5 chat template", true, false}},
    {ChatFormat::DeepSeekV32, {"deepseek-v3.2", "DeepSeek-V3.2 chat encoding", true, false}},
    {ChatFormat::DeepSeekV4, {"deepseek-v4", "DeepSeek V4 chat encoding", true, false}},
}};

} // namespace

const ChatFormatTraits &chatFormatTraits(ChatFormat format)
{
    for (const Row &r : kRows)
        if (r.format == format)
            return r.traits;
    return kRows[0].traits;
}

const char *chatFormatName(ChatFormat format) { return chatFormatTraits(format).name; }

const std::vector<ChatFormat> &namedChatFormats()
{
    // The order `waste template --format` has always listed them in.
    static const std::vector<ChatFormat> named{ChatFormat::K3,          ChatFormat::ChatMl, ChatFormat::DeepSeek,
                                               ChatFormat::DeepSeekV31, ChatFormat::KimiK2, ChatFormat::KimiK2Instruct,
                                               ChatFormat::Qwen3,       ChatFormat::Harmony, ChatFormat::Glm45,
                                               ChatFormat::Glm47, ChatFormat::Qwen35, ChatFormat::DeepSeekV32,
                                               ChatFormat::DeepSeekV4};
    return named;
}

std::optional<ChatFormat> chatFormatNamed(std::string_view name)
{
    for (ChatFormat f : namedChatFormats())
        if (name == chatFormatName(f))
            return f;
    return std::nullopt;
}

std::string chatFormatNameList(std::string_view lastSeparator)
{
    const std::vector<ChatFormat> &named = namedChatFormats();
    std::string out;
    for (size_t i = 0; i < named.size(); ++i) {
        if (i > 0)
            out += i + 1 == named.size() ? std::string(lastSeparator) : std::string(", ");
        out += chatFormatName(named[i]);
    }
    return out;
}

ChatFormat genericChatFormat() { return ChatFormat::ChatMl; }

} // namespace waste
