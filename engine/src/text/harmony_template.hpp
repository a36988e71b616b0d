// gpt-oss's "harmony" chat format, rendered from an OpenAI-style chat request the way
// the release's Jinja chat_template renders it (checked against it by tests/chat_templates):
//   <|start|>system<|message|>identity, knowledge cutoff, current date, "Reasoning: E",
//     the valid channels (and the functions routing line when tools are offered)<|end|>
//   <|start|>developer<|message|># Instructions ... # Tools namespace functions {...}<|end|>
//   <|start|>user<|message|>...<|end|>
//   <|start|>assistant<|channel|>final<|message|>...<|end|>   (earlier reasoning dropped)
//   [<|start|>assistant<|channel|>analysis<|message|>...<|end|>]   (kept before a call until a final answer)
//   <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>ARGS<|call|>
//   <|start|>functions.NAME to=assistant<|channel|>commentary<|message|>"RESULT"<|end|>
//   <|start|>assistant                                       (the generation prompt)
// Request fields read: messages (role, content, thinking or reasoning_content, tool_calls,
// tool_call_id), tools, reasoning_effort (low | medium | high; default medium; minimal
// and none read as low), model_identity, add_generation_prompt (default true).
// Where the release template loses or refuses something, this renderer keeps it:
//   - every tool call of a message is written (the template writes only the first), and
//     a tool result names the call its tool_call_id points at (else the latest call);
//   - arguments sent as JSON text (the OpenAI API's form) are written as that JSON, not
//     as a quoted string;
//   - null content reads as empty.
// Segments: each special token is its own markup segment and everything between two
// specials is one text segment, so the prompt tokenizes exactly as the release's
// tokenizer splits the rendered string (specials first, then BPE between them), and
// nothing a request writes can become a special.
// Throws waste::Error(Argument) naming what is malformed.
#pragma once

#include "text/chat_segments.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace waste::text {

Segments renderHarmony(const nlohmann::ordered_json &request);

// The "## functions" namespace block of the developer message for an OpenAI `tools`
// array, from "## functions" to "} // namespace functions" (harmony_tools.cpp).
std::string harmonyToolNamespace(const nlohmann::ordered_json &tools);

// The request's reasoning effort as harmony writes it: "low", "medium" or "high".
std::string harmonyReasoningEffort(const nlohmann::ordered_json &request);

} // namespace waste::text
