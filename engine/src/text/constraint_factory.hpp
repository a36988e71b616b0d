// Builds constrained-decoding constraints from what an API request carries: a
// response_format schema, or the tools of a forced tool call, in the chat format's own
// reply layout (text/reply_frame.hpp). waste::makeJsonConstraint and
// waste::makeToolCallConstraint (waste.hpp) are these on an open model.
#pragma once

#include "text/json_schema.hpp"
#include "text/reply_frame.hpp"
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
// The same for functions already read.
std::string toolCallSchema(const ToolSchemas &tools);
// The (name, parameters schema) of every function in `toolsJson`, or only `functionName`;
// Error(Argument) when there is none.
ToolSchemas toolParameters(std::string_view toolsJson, std::string_view functionName = {});

// The reply to `prompt` in `format`: one JSON document matching `schemaJson` (empty: any
// object) as its content.
std::shared_ptr<TokenConstraint> makeAnswerConstraint(ChatFormat format, const Tokenizer &tok,
                                                      std::span<const int32_t> prompt, std::string_view schemaJson,
                                                      int maxTokens);
// The reply to `prompt` in `format`: one call of a function of `toolsJson` (only
// `functionName` when given).
std::shared_ptr<TokenConstraint> makeCallConstraint(ChatFormat format, const Tokenizer &tok,
                                                    std::span<const int32_t> prompt, std::string_view toolsJson,
                                                    std::string_view functionName, int maxTokens);

// A thinking budget for a free reply to `prompt` in `format` (text/thinking_budget.hpp):
// reasoning cut after `budget` tokens, closed and led into the answer as the format's
// answer frame writes it. Null when the reply does not reason (the format has no
// reasoning, or the prompt turned it off).
std::shared_ptr<TokenConstraint> makeThinkingBudget(ChatFormat format, const Tokenizer &tok,
                                                    std::span<const int32_t> prompt, int budget);

// A bare JSON document then `eos`, over the tokens of `trie`.

std::shared_ptr<TokenConstraint> makeJsonConstraint(std::shared_ptr<const TokenTrie> trie, int32_t eos,
                                                    std::string_view schemaJson, int maxTokens);

} // namespace waste::text
