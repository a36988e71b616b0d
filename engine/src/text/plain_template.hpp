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

// A call written as text, the way the transcript's instructions ask for one:
// <tool_call>{"arguments": ..., "name": ...}</tool_call>, keys sorted, the arguments as an object
// when `arguments` is one (a JSON object, or JSON text of one), else as they came.
std::string toolCallText(const std::string &name, const nlohmann::ordered_json &arguments);
// The same call's JSON alone, without the tags: how a call of an undeclared function is shown
// (declared_tools_parser). <tool_call> is markup in many vocabularies (Qwen, GLM), never text
// a user sees, and a client that sent it back would hand the model a call it never made.
std::string toolCallJson(const std::string &name, const nlohmann::ordered_json &arguments);

} // namespace waste::text
