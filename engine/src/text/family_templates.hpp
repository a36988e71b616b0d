// The chat templates of the DeepSeek-V3, Kimi K2, Qwen3, GLM-4.5 and Qwen3.5 releases (and the
// Python encoders of DeepSeek-V3.2 and V4), rendered from an
// OpenAI-style chat request segment for segment as the release's Jinja chat_template
// renders it (checked against the real templates by tests/chat_templates):
//   - DeepSeek: DeepSeek-R1's template (the V3 family's format with its think block);
//     "thinking": false gives V3's plain generation prompt instead of "<think>\n";
//   - DeepSeek-V3.1: its own template (thinking switched by the prompt's last token,
//     <think> or </think>; calls as NAME<｜tool▁sep｜>ARGS; deepseek_v31_template.cpp);
//   - Kimi K2: Kimi-K2-Thinking's template (tool_declare, "## Return of" tool results,
//     <think> kept only after the last plain assistant answer);
//   - Kimi K2-Instruct: the same markup with no <think> at all (K2-Instruct, -0905);
//   - Qwen3: Qwen3's ChatML with <tools>, <tool_call>, <tool_response> and <think>
//     (earlier turns drop their reasoning; "enable_thinking": false closes it empty).
//   - GLM-4.5: GLM-4.5's / 4.6's template ([gMASK]<sop>, <|system|> <|user|> <|assistant|>
//     <|observation|> each followed by a newline, calls as <tool_call>NAME then
//     <arg_key>/<arg_value> pairs, reasoning kept after the last user message;
//     "enable_thinking": false appends /nothink and closes the think block empty);
//   - GLM-4.7: the same markers with no newlines after them or inside calls, </think> for an
//     answer whose reasoning is dropped, "clear_thinking": false keeps every turn's reasoning
//     (glm_template.cpp renders both layouts).
//   - Qwen3.5: Qwen3.5-MoE's template (ChatML, trimmed contents, the tools block with
//     Qwen3-Coder's instructions, calls as <tool_call>\n<function=NAME> with one
//     <parameter=KEY> block per argument, reasoning kept after the last user query, the
//     generation prompt opening <think>; qwen35_template.cpp).
// Request fields read: messages (role, content as a string or text parts, name,
// reasoning_content, tool_calls [{id, type, function {name, arguments}}], tool_call_id),
// tools, add_generation_prompt (default true), thinking / enable_thinking.
// Throws waste::Error(Argument) naming what is malformed.
#pragma once

#include "text/chat_segments.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

Segments renderDeepSeek(const nlohmann::ordered_json &request);
Segments renderDeepSeekV31(const nlohmann::ordered_json &request);
Segments renderKimiK2(const nlohmann::ordered_json &request);
Segments renderKimiK2Instruct(const nlohmann::ordered_json &request);
Segments renderQwen3(const nlohmann::ordered_json &request);
Segments renderGlm45(const nlohmann::ordered_json &request);
Segments renderGlm47(const nlohmann::ordered_json &request);
Segments renderQwen35(const nlohmann::ordered_json &request);
// DeepSeek-V3.2's and V4's encoders (deepseek_v32_template.cpp, dsv4_template.cpp; their rules
// in docs/architectures/dsa.md and deepseek-v4-flash.md, checked against Python ports of
// encoding_dsv32.py and encoding_dsv4.py by tst_dsml_encodings): calls as DSML invokes, in
// <｜DSML｜function_calls> (V3.2) or <｜DSML｜tool_calls> (V4).
Segments renderDeepSeekV32(const nlohmann::ordered_json &request);
Segments renderDeepSeekV4(const nlohmann::ordered_json &request);

// Whether the request asks for thinking: true unless "thinking" or "enable_thinking" is
// false (or {"type": "disabled"}), or "reasoning_effort" / "thinking_effort" is none,
// minimal or off.
bool familyThinkingEnabled(const nlohmann::ordered_json &request);

// DeepSeek-V3.1's switch, off unless asked for (the release's default): "thinking" or
// "enable_thinking" as the template reads them (true, or {"type": "enabled"}); else a
// "reasoning_effort" / "thinking_effort" other than none, minimal or off.
bool deepSeekV31Thinking(const nlohmann::ordered_json &request);

} // namespace waste::text
