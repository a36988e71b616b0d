// The public chat functions of waste/chat.hpp that write prompts: the format's name, the
// format of a container read without weights, and a request rendered with a template,
// its images placed. The templates themselves are k3_template and chatml_template.
#include "waste/chat.hpp"

#include "format/file.hpp"
#include "format/manifest.hpp"
#include "text/chat_format.hpp"
#include "text/chatml_template.hpp"
#include "text/family_templates.hpp"
#include "text/harmony_template.hpp"
#include "text/k3_template.hpp"
#include "text/tokenizer.hpp"
#include "waste/waste.hpp"

#include <optional>

namespace waste {

namespace {

using Json = nlohmann::ordered_json;

// The marker the ChatML renderer writes where an image part was.
constexpr const char *kImagePlaceholder = "<|kimi_image_placeholder|>";

Json parseRequest(std::string_view requestJson)
{
    try {
        return Json::parse(requestJson);
    } catch (const Json::exception &e) {
        throw Error(ErrorCode::Argument, std::string("chat request: not valid JSON: ") + e.what());
    }
}

void placeImageBlocks(ChatSegments &segments, const std::vector<std::string> &blocks)
{
    size_t image = 0;
    for (ChatSegment &s : segments) {
        if (!s.markup || s.text != kImagePlaceholder)
            continue;
        if (image >= blocks.size())
            throw Error(ErrorCode::Argument, "the chat template placed more images than the conversation has");
        s.text = blocks[image++];
    }
    if (image != blocks.size())
        throw Error(ErrorCode::Argument, "the chat template left out an image of the conversation");
}

} // namespace

const char *chatFormatName(ChatFormat format)
{
    switch (format) {
    case ChatFormat::K3:
        return "k3";
    case ChatFormat::ChatMl:
        return "chatml";
    case ChatFormat::DeepSeek:
        return "deepseek";
    case ChatFormat::KimiK2:
        return "kimi-k2";
    case ChatFormat::Qwen3:
        return "qwen3";
    case ChatFormat::Harmony:
        return "harmony";
    case ChatFormat::DeepSeekV31:
        return "deepseek-v3.1";
    case ChatFormat::KimiK2Instruct:
        return "kimi-k2-instruct";
    case ChatFormat::Plain:
        break;
    }
    return "plain";
}

ChatFormat containerChatFormat(const std::string &containerPath)
{
    const std::string manifestPath = containerPath + "/manifest.json";
    const format::Manifest manifest =
        format::parseManifest(format::readWholeFile(manifestPath, int64_t(256) << 20), manifestPath);
    std::optional<text::Tokenizer> tok;
    if (text::Tokenizer::present(containerPath))
        tok = text::Tokenizer::load(containerPath, -1, -1, manifest.config.arch);
    return text::decideChatFormat(manifest.config.arch, tok ? &*tok : nullptr,
                                  text::hasChatTemplateFile(containerPath), text::chatTemplateText(containerPath));
}

ChatSegments renderChat(ChatFormat format, std::string_view requestJson, const std::vector<std::string> &mediaBlocks)
{
    Json request = parseRequest(requestJson);
    switch (format) {
    case ChatFormat::K3:
        request["image_prompts"] = mediaBlocks;
        return text::renderK3(request);
    case ChatFormat::ChatMl: {
        ChatSegments segments = text::renderChatMl(request);
        if (!mediaBlocks.empty())
            placeImageBlocks(segments, mediaBlocks);
        return segments;
    }
    case ChatFormat::DeepSeek:
    case ChatFormat::KimiK2:
    case ChatFormat::Qwen3:
    case ChatFormat::Harmony:
    case ChatFormat::DeepSeekV31:
    case ChatFormat::KimiK2Instruct:
        if (!mediaBlocks.empty())
            throw Error(ErrorCode::Argument, std::string("the ") + chatFormatName(format) +
                                                 " chat format takes no images; send the conversation as text");
        switch (format) {
        case ChatFormat::DeepSeek:
            return text::renderDeepSeek(request);
        case ChatFormat::DeepSeekV31:
            return text::renderDeepSeekV31(request);
        case ChatFormat::KimiK2:
            return text::renderKimiK2(request);
        case ChatFormat::KimiK2Instruct:
            return text::renderKimiK2Instruct(request);
        case ChatFormat::Qwen3:
            return text::renderQwen3(request);
        default:
            return text::renderHarmony(request);
        }
    case ChatFormat::Plain:
        break;
    }
    throw Error(ErrorCode::Argument, "a plain transcript has no chat template to render with");
}

bool chatOpensThinking(ChatFormat format, std::string_view requestJson)
{
    if (format == ChatFormat::DeepSeek)
        return text::familyThinkingEnabled(parseRequest(requestJson));
    if (format == ChatFormat::DeepSeekV31) {
        // V3.1 opens <think> only after a user turn, with thinking on: read its prompt's end.
        const ChatSegments segments = text::renderDeepSeekV31(parseRequest(requestJson));
        return !segments.empty() && segments.back().markup && segments.back().text.ends_with("<think>");
    }
    return format == ChatFormat::K3 && text::k3ThinkingEnabled(parseRequest(requestJson));
}

} // namespace waste
