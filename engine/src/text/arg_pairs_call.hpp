// GLM-4.5's tool-call body, the text between <tool_call> and </tool_call>: the function's name,
// then one <arg_key>KEY</arg_key> <arg_value>VALUE</arg_value> pair per argument (whitespace
// between them), as its template writes a call and vLLM's / mlx-lm's glm45 parsers read one.
#pragma once

#include "text/argument_types.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

struct ArgPairsCall {
    std::string name;
    std::vector<RawArgument> arguments; // in order, each value as written (argumentsJson reads them)
};

// The call in `body`; none when it has no name or a pair is malformed (the block then stays text).
std::optional<ArgPairsCall> parseArgPairsCall(std::string_view body);
// Whether `piece` is one of the body's four tags (<arg_key>, </arg_key>, <arg_value>, </arg_value>).
bool isArgPairsTag(std::string_view piece);

} // namespace waste::text
