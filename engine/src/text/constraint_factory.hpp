// Builds constrained-decoding constraints from what an API request carries:
// a response_format schema, or the tools of a forced tool call.
#pragma once

#include "text/json_schema.hpp"
#include "text/token_trie.hpp"
#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waste::text {

// The schema a forced tool call must match: {"name": <one tool>, "arguments": <its
// parameters>}, for every function in `toolsJson` (an OpenAI "tools" array) or
// only for `functionName` when given. Local "$ref"s inside parameters are rebased.
std::string toolCallSchema(std::string_view toolsJson, std::string_view functionName = {});
// The (name, parameters schema) of every function in `toolsJson`, or only `functionName`;
// Error(Argument) when there is none.
std::vector<std::pair<std::string, nlohmann::json>> toolParameters(std::string_view toolsJson,
                                                                   std::string_view functionName = {});

std::shared_ptr<TokenConstraint> makeJsonConstraint(std::shared_ptr<const TokenTrie> trie, int32_t eos,
                                                    std::string_view schemaJson, int maxTokens);

} // namespace waste::text
