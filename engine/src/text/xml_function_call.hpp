// Qwen3.5's tool-call body (Qwen3-Coder's XML), the text between <tool_call> and </tool_call>:
// <function=NAME> then one <parameter=KEY>\nVALUE\n</parameter> block per argument, then
// </function>, whitespace between them, as its template writes a call and vLLM's
// qwen3_coder parser reads one.
#pragma once

#include "text/argument_types.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

struct XmlFunctionCall {
    std::string name;
    std::vector<RawArgument> arguments; // in order, each value as written (argumentsJson reads them)
};

// The call in `body`; none when it has no <function=NAME> or a block is malformed (the
// block then stays text).
std::optional<XmlFunctionCall> parseXmlFunctionCall(std::string_view body);

} // namespace waste::text
