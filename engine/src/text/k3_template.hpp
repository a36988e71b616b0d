// Kimi K3's prompt format ("XTML": XML-like elements whose brackets are the special
// tokens <|open|>, <|close|>, <|sep|>, <|end_of_msg|>), rendered from an
// OpenAI-style chat request, segment for segment as the K3 release's encoder does.
//
// Request fields read: messages (role, content as a string or parts, name,
// reasoning_content / reasoning, tool_calls, tool_call_id, tool, tools on a system
// message), tools, tool_choice, response_format, thinking (default true),
// thinking_effort (or reasoning_effort), add_generation_prompt (default true),
// image_prompts (one media markup string per image, in order of appearance).
#pragma once

#include "text/chat_segments.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waste::text {

// Throws waste::Error(Argument) for a malformed request (naming the field).
Segments renderK3(const nlohmann::ordered_json &request);
Segments renderK3Json(std::string_view requestJson);

// One element's header (<|open|>tag k="v"<|sep|>) and footer (<|close|>tag<|sep|>),
// segment for segment as the renderer writes them (each attribute piece is its own text
// segment, as in the release's encoder; values escaped, see k3_elements.hpp).
Segments k3OpenSegments(const std::string &tag, const std::vector<std::pair<std::string, std::string>> &attrs);
Segments k3CloseSegments(const std::string &tag);
inline constexpr const char *kK3EndOfMessage = "<|end_of_msg|>";

// Whether generation starts in the think channel (thinking on) or the response channel.
bool k3ThinkingEnabled(const nlohmann::ordered_json &request);

} // namespace waste::text
