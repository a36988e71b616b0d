#include "text/constraint_factory.hpp"

#include "text/json_constraint.hpp"
#include "text/thinking_budget.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

using json = nlohmann::ordered_json; // a tool's properties keep the order its schema lists them in

namespace {

// Prefixes every local "$ref" inside `node` so it still points into `node` once
// `node` is embedded at `base` of a larger document.
void rebaseRefs(json &node, const std::string &base)
{
    if (node.is_object()) {
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (it.key() == "$ref" && it->is_string()) {
                const std::string ref = it->get<std::string>();
                if (!ref.empty() && ref[0] == '#')
                    *it = "#" + base + ref.substr(1);
            } else {
                rebaseRefs(*it, base);
            }
        }
    } else if (node.is_array()) {
        for (json &x : node)
            rebaseRefs(x, base);
    }
}

} // namespace

ToolSchemas toolParameters(std::string_view toolsJson, std::string_view functionName)
{
    json tools;
    try {
        tools = json::parse(toolsJson);
    } catch (const json::exception &e) {
        throw Error(ErrorCode::Argument, std::string("tools are not valid JSON: ") + e.what());
    }
    if (!tools.is_array())
        throw Error(ErrorCode::Argument, "tools must be a JSON array");
    ToolSchemas out;
    for (const json &tool : tools) {
        const json &fn = tool.contains("function") ? tool.at("function") : tool;
        if (!fn.is_object() || !fn.contains("name") || !fn.at("name").is_string())
            throw Error(ErrorCode::Argument, "every tool needs a function with a string 'name'");
        const std::string name = fn.at("name").get<std::string>();
        if (!functionName.empty() && name != functionName)
            continue;
        out.emplace_back(name, fn.contains("parameters") && fn.at("parameters").is_object() ? fn.at("parameters")
                                                                                             : json{{"type", "object"}});
    }
    if (out.empty())
        throw Error(ErrorCode::Argument, functionName.empty()
                                             ? std::string("tool_choice requires a tool, but no tools were given")
                                             : "tool_choice names '" + std::string(functionName) +
                                                   "', which is not among the tools");
    return out;
}

std::string toolCallSchema(std::string_view toolsJson, std::string_view functionName)
{
    return toolCallSchema(toolParameters(toolsJson, functionName));
}

std::string toolCallSchema(const ToolSchemas &tools)
{
    json branches = json::array();
    for (auto [name, params] : tools) {
        const std::string base = (tools.size() > 1 ? "/anyOf/" + std::to_string(branches.size()) : "") +
                                 "/properties/arguments";
        rebaseRefs(params, base);
        branches.push_back({{"type", "object"},
                            {"properties", {{"name", {{"const", name}}}, {"arguments", params}}},
                            {"required", {"name", "arguments"}},
                            {"additionalProperties", false}});
    }
    if (branches.size() == 1)
        return branches[0].dump();
    return json{{"anyOf", branches}}.dump();
}

namespace {

std::shared_ptr<const Schema> compileOrAny(std::string_view schemaJson)
{
    const bool empty = schemaJson.find_first_not_of(" \t\r\n") == std::string_view::npos;
    return empty ? Schema::anyObject() : Schema::compile(schemaJson);
}

} // namespace

std::shared_ptr<TokenConstraint> makeAnswerConstraint(ChatFormat format, const Tokenizer &tok,
                                                      std::span<const int32_t> prompt, std::string_view schemaJson,
                                                      int maxTokens)
{
    const auto framer = replyFramer(format, tok, prompt);
    return frameConstraint(framer->answer(compileOrAny(schemaJson)), tok, maxTokens);
}

std::shared_ptr<TokenConstraint> makeCallConstraint(ChatFormat format, const Tokenizer &tok,
                                                    std::span<const int32_t> prompt, std::string_view toolsJson,
                                                    std::string_view functionName, int maxTokens)
{
    const auto framer = replyFramer(format, tok, prompt);
    return frameConstraint(framer->call(toolParameters(toolsJson, functionName)), tok, maxTokens);
}

std::shared_ptr<TokenConstraint> makeThinkingBudget(ChatFormat format, const Tokenizer &tok,
                                                    std::span<const int32_t> prompt, int budget)
{
    // The answer frame of any document says how reasoning opens and closes and what leads
    // into the answer; the document itself is not followed.
    const ReplyFrame frame = replyFramer(format, tok, prompt)->answer(Schema::anyObject());
    if (!frame.reasoning.allowed)
        return nullptr;
    return std::make_shared<ThinkingBudget>(frame.reasoning, frame.branches.at(0).prefix, budget);
}

std::shared_ptr<TokenConstraint> makeJsonConstraint(std::shared_ptr<const TokenTrie> trie, int32_t eos,
                                                    std::string_view schemaJson, int maxTokens)
{
    return std::make_shared<JsonConstraint>(std::move(trie), eos, compileOrAny(schemaJson), maxTokens);
}

} // namespace waste::text
