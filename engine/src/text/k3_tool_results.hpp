// Tool calls and the results that answer them, normalised as the K3 encoder does before
// rendering: each run of consecutive tool messages is matched to the calls of the
// assistant message before it by tool_call_id and re-sorted into call order, a matched
// result taking its tool name from the call. A run with any result that matches no call
// is left as sent.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace waste::text {

struct K3Call {
    std::optional<std::string> id;
    std::string name;                                  // empty when the call names none
    const nlohmann::ordered_json *arguments = nullptr; // null when the call has none
};

// An assistant message's tool_calls (each an OpenAI {id, function: {name, arguments}}
// or a bare {id, name, arguments}); empty for any other message.
std::vector<K3Call> k3ToolCalls(const nlohmann::ordered_json &message);

struct K3OrderedMessage {
    const nlohmann::ordered_json *message = nullptr;
    size_t index = 0;     // its place in the request's messages, for errors
    std::string callName; // a matched tool result: the name of the call it answers
};

// The request's messages in rendering order.
std::vector<K3OrderedMessage> k3OrderToolResults(const nlohmann::ordered_json &messages);

} // namespace waste::text
