// The public chat functions of waste/chat.hpp that write prompts: the format of a container
// read without weights, a request rendered in a format with its images placed, and the part
// of it a later request shares. The templates themselves are k3_template, chatml_template,
// the families' (family_templates.hpp), harmony_template and plain_template.
#include "waste/chat.hpp"

#include "format/file.hpp"
#include "format/manifest.hpp"
#include "text/chat_format.hpp"
#include "text/chatml_template.hpp"
#include "text/family_templates.hpp"
#include "text/harmony_template.hpp"
#include "text/k3_template.hpp"
#include "text/plain_template.hpp"
#include "text/tokenizer.hpp"
#include "waste/waste.hpp"

#include <optional>

namespace waste {

namespace {

using Json = nlohmann::ordered_json;

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
        if (!s.markup || s.text != text::kImagePlaceholder)
            continue;
        if (image >= blocks.size())
            throw Error(ErrorCode::Argument, "the chat template placed more images than the conversation has");
        s.text = blocks[image++];
    }
    if (image != blocks.size())
        throw Error(ErrorCode::Argument, "the chat template left out an image of the conversation");
}

} // namespace

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
    case ChatFormat::ChatMl:
    case ChatFormat::Plain: {
        ChatSegments segments = format == ChatFormat::Plain ? text::renderPlain(request) : text::renderChatMl(request);
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
    case ChatFormat::Glm45:
    case ChatFormat::Glm47:
    case ChatFormat::Qwen35:
    case ChatFormat::DeepSeekV32:
    case ChatFormat::DeepSeekV4:
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
        case ChatFormat::Glm45:
            return text::renderGlm45(request);
        case ChatFormat::Glm47:
            return text::renderGlm47(request);
        case ChatFormat::Qwen35:
            return text::renderQwen35(request);
        case ChatFormat::DeepSeekV32:
            return text::renderDeepSeekV32(request);
        case ChatFormat::DeepSeekV4:
            return text::renderDeepSeekV4(request);
        default:
            return text::renderHarmony(request);
        }
    }
    throw Error(ErrorCode::Argument, "unknown chat format");
}

bool chatOpensThinking(ChatFormat format, std::string_view requestJson)
{
    if (format == ChatFormat::DeepSeek || format == ChatFormat::Qwen35) // both open <think> unless thinking is off
        return text::familyThinkingEnabled(parseRequest(requestJson));
    if (format == ChatFormat::DeepSeekV31 || format == ChatFormat::DeepSeekV32 || format == ChatFormat::DeepSeekV4) {
        // These open <think> only where a user turn (or V3.2's tool results) hands over with
        // thinking on: read the prompt's end.
        const ChatSegments segments = renderChat(format, requestJson, {});
        return !segments.empty() && segments.back().markup && segments.back().text.ends_with("<think>");
    }
    return format == ChatFormat::K3 && text::k3ThinkingEnabled(parseRequest(requestJson));
}

namespace {

// The request with U+2063 (INVISIBLE SEPARATOR, which no message ends with by chance twice)
// after the last words of its last message; false when that message has none.
bool markLastMessage(Json &request)
{
    constexpr const char *kMark = "\xE2\x81\xA3";
    if (!request.is_object() || !request.contains("messages") || !request.at("messages").is_array() ||
        request.at("messages").empty())
        return false;
    Json &last = request.at("messages").back();
    if (!last.is_object() || !last.contains("content"))
        return false;
    Json &content = last.at("content");
    if (content.is_string()) {
        if (content.get<std::string>().empty())
            return false;
        content = content.get<std::string>() + kMark;
        return true;
    }
    if (!content.is_array())
        return false;
    for (auto part = content.rbegin(); part != content.rend(); ++part)
        if (part->is_object() && part->contains("text") && part->at("text").is_string()) {
            if (part->at("text").get<std::string>().empty())
                return false;
            (*part)["text"] = part->at("text").get<std::string>() + kMark;
            return true;
        }
    return false;
}

} // namespace

ChatPrompt renderChatPrompt(ChatFormat format, std::string_view requestJson, const std::vector<std::string> &mediaBlocks)
{
    ChatPrompt out;
    out.segments = renderChat(format, requestJson, mediaBlocks);
    out.opensThinking = chatOpensThinking(format, requestJson);
    // What differs between the two renderings is where the last message starts.
    Json probe = parseRequest(requestJson);
    if (markLastMessage(probe)) {
        try {
            const ChatSegments other = renderChat(format, probe.dump(), mediaBlocks);
            while (out.sharedSegments < out.segments.size() && out.sharedSegments < other.size() &&
                   out.segments[out.sharedSegments] == other[out.sharedSegments])
                ++out.sharedSegments;
        } catch (const Error &) {
            out.sharedSegments = 0;
        }
    }
    return out;
}

} // namespace waste
