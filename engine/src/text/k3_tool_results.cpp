#include "text/k3_tool_results.hpp"

#include "text/json_field.hpp"

#include <algorithm>

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {

bool hasRole(const Json &m, const char *role)
{
    const std::string *r = stringField(m, "role");
    return r && *r == role;
}

// The call a tool result answers, by position in `calls`; none without a matching id.
std::optional<size_t> answeredCall(const Json &result, const std::vector<K3Call> &calls)
{
    const std::string *id = stringField(result, "tool_call_id");
    if (!id)
        return std::nullopt;
    for (size_t i = 0; i < calls.size(); ++i)
        if (calls[i].id == *id)
            return i;
    return std::nullopt;
}

} // namespace

std::vector<K3Call> k3ToolCalls(const Json &message)
{
    std::vector<K3Call> calls;
    if (!hasRole(message, "assistant"))
        return calls;
    const auto list = message.find("tool_calls");
    if (list == message.end() || !list->is_array())
        return calls;
    for (const Json &call : *list) {
        const Json &fn = call.is_object() && call.contains("function") ? call.at("function") : call;
        K3Call c;
        if (const std::string *id = stringField(call, "id"))
            c.id = *id;
        if (const std::string *name = stringField(fn, "name"))
            c.name = *name;
        if (fn.is_object())
            if (const auto args = fn.find("arguments"); args != fn.end())
                c.arguments = &*args;
        calls.push_back(std::move(c));
    }
    return calls;
}

std::vector<K3OrderedMessage> k3OrderToolResults(const Json &messages)
{
    std::vector<K3OrderedMessage> out;
    std::vector<K3Call> calls; // those of the latest assistant message
    for (size_t i = 0; i < messages.size();) {
        if (!hasRole(messages[i], "tool")) {
            if (hasRole(messages[i], "assistant"))
                calls = k3ToolCalls(messages[i]);
            out.push_back({&messages[i], i, {}});
            ++i;
            continue;
        }
        struct Answer {
            K3OrderedMessage message;
            std::optional<size_t> call;
        };
        std::vector<Answer> run;
        for (; i < messages.size() && hasRole(messages[i], "tool"); ++i)
            run.push_back({{&messages[i], i, {}}, answeredCall(messages[i], calls)});
        const bool allMatched = std::all_of(run.begin(), run.end(), [](const Answer &a) { return a.call.has_value(); });
        if (allMatched) {
            std::stable_sort(run.begin(), run.end(), [](const Answer &a, const Answer &b) { return *a.call < *b.call; });
            for (Answer &a : run)
                a.message.callName = calls[*a.call].name;
        }
        for (Answer &a : run)
            out.push_back(std::move(a.message));
    }
    return out;
}

} // namespace waste::text
