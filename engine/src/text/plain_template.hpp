// The transcript of a container without a chat template (ChatFormat::Plain): every message
// becomes "role: " and its words, a blank line after each, then "assistant: ". All of it is
// ordinary text, so nothing a client sends can be read as markup; the only markup is an
// image's placeholder, which renderChat replaces with the image's media block. Tools, when
// the request offers them, are declared in a leading "system: " paragraph with the call
// syntax the reply is read back in (a <tool_call> block, or the bare JSON a forced call's
// constraint writes: declared_tools_parser).
#pragma once

#include "text/chat_segments.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

// The placeholder markup a renderer writes where an image part was (replaced by its media
// block, chat_render.cpp).
inline constexpr const char *kImagePlaceholder = "<|kimi_image_placeholder|>";

Segments renderPlain(const nlohmann::ordered_json &request);

} // namespace waste::text
