// A tool call's arguments, normalised as the K3 encoder does before writing them: a JSON
// object (or a string holding one) becomes typed arguments; an empty or whitespace-only
// string, or null, means no arguments; a string that is not JSON is kept raw (the model
// sees back what it emitted, never a silent repair); JSON that is not an object is refused.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace waste::text {

struct K3Argument {
    std::string key;
    std::string type; // boolean, null, number, string, object or array
    std::string body; // a string bare, every other value as JSON
};

struct K3Arguments {
    std::vector<K3Argument> typed;
    std::optional<std::string> raw; // set only for a string that does not parse as JSON
};

// `where` names the field in an error ("messages[1].tool_calls[0].function.arguments"). Throws
// waste::Error(Argument) for arguments that are JSON but not an object.
K3Arguments k3Arguments(const nlohmann::ordered_json &arguments, const std::string &where);

} // namespace waste::text
