// Which arguments of each declared tool are strings (an OpenAI "tools" array's JSON Schema
// "type": "string"). Formats that write each argument as its own text (GLM's <arg_value>,
// Qwen3-Coder's <parameter=…>) write a string as it is and any other value as JSON, so a
// parser reads a value back as JSON where it parses, except where the tool declares a
// string: "123", "true" or "{…}" typed as a string stay those characters (as vLLM's glm45 and
// qwen3_coder parsers read them).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

// Whether a property's JSON Schema declares a string: "string", or a list of types whose only
// non-null one is "string" (["string", "null"]).
bool isStringSchema(const nlohmann::json &schema);

// Function name → the names of its string-typed parameters.
using StringArguments = std::map<std::string, std::set<std::string>>;

// From an OpenAI "tools" array (unparseable or absent parts give nothing; the caller has
// already refused a tools value that is not an array).
StringArguments stringArgumentsOf(std::string_view toolsJson);

struct RawArgument {
    std::string key;
    std::string text; // as the model wrote it
};

// The arguments as a JSON object: each value parsed as JSON where it parses and the tool does
// not declare it a string, else the text as a string. `strings`: the call's function's
// string-typed parameters (null: none known).
std::string argumentsJson(const std::vector<RawArgument> &args, const std::set<std::string> *strings);

} // namespace waste::text
