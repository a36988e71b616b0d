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

#include <string_view>

namespace waste::text {

// Throws waste::Error(Argument) for a malformed request (naming the field).
Segments renderK3(const nlohmann::ordered_json &request);
Segments renderK3Json(std::string_view requestJson);

// Whether generation starts in the think channel (thinking on) or the response channel.
bool k3ThinkingEnabled(const nlohmann::ordered_json &request);

} // namespace waste::text
