// Pieces both Kimi K2 templates (K2-Thinking's and K2-Instruct's) write the same way:
// the tools' declaration, the default system prompt, a message's content
// (render_content), its role header (set_roles), an assistant message's calls section
// (render_toolcalls), a tool result and the generation prompt.
#pragma once

#include "text/family_request.hpp"
#include "text/segment_writer.hpp"

namespace waste::text::kimi {

// Both templates' system prompt for a conversation that brings none (where each writes it differs).
inline constexpr const char *kDefaultSystem = "You are Kimi, an AI assistant created by Moonshot AI.";

// The request's tools, when it has any, as a tool_declare system message.
void toolDeclaration(SegmentWriter &w, const family::Json &request);

// A string as it is; parts in order, an image as its media markup and a newline.
void content(SegmentWriter &w, const family::Json &message);
// <|im_user|>, <|im_assistant|> or <|im_system|>, the message's name (or its role), <|im_middle|>.
void roleHeader(SegmentWriter &w, const family::Json &message);
// <|tool_calls_section_begin|> then each call as <|tool_call_begin|>ID<|tool_call_argument_begin|>ARGS<|tool_call_end|>.
void toolCalls(SegmentWriter &w, const family::Json &message);
// "## Return of ID\n" and the content: how both write a tool result.
void toolResult(SegmentWriter &w, const family::Json &message);
// <|im_assistant|>assistant<|im_middle|> when the request asks for the generation prompt.
void generationPrompt(SegmentWriter &w, const family::Json &request);

} // namespace waste::text::kimi
