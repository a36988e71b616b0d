#include "text/constraint_factory.hpp"

#include "text/json_constraint.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

using nlohmann::json;

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

std::string toolCallSchema(std::string_view toolsJson, std::string_view functionName)
{
    json tools;
    try {
        tools = json::parse(toolsJson);
    } catch (const json::exception &e) {
        throw Error(ErrorCode::Argument, std::string("tools are not valid JSON: ") + e.what());
    }
    if (!tools.is_array())
        throw Error(ErrorCode::Argument, "tools must be a JSON array");
    json branches = json::array();
    for (const json &tool : tools) {
        const json &fn = tool.contains("function") ? tool.at("function") : tool;
        if (!fn.is_object() || !fn.contains("name") || !fn.at("name").is_string())
            throw Error(ErrorCode::Argument, "every tool needs a function with a string 'name'");
        const std::string name = fn.at("name").get<std::string>();
        if (!functionName.empty() && name != functionName)
            continue;
        json params = fn.contains("parameters") && fn.at("parameters").is_object() ? fn.at("parameters")
                                                                                    : json{{"type", "object"}};
        const std::string base = (functionName.empty() ? "/anyOf/" + std::to_string(branches.size()) : "") +
                                 "/properties/arguments";
        rebaseRefs(params, base);
        branches.push_back({{"type", "object"},
                            {"properties", {{"name", {{"const", name}}}, {"arguments", params}}},
                            {"required", {"name", "arguments"}},
                            {"additionalProperties", false}});
    }
    if (branches.empty())
        throw Error(ErrorCode::Argument, functionName.empty()
                                             ? std::string("tool_choice requires a tool, but no tools were given")
                                             : "tool_choice names '" + std::string(functionName) +
                                                   "', which is not among the tools");
    if (branches.size() == 1)
        return branches[0].dump();
    return json{{"anyOf", branches}}.dump();
}

std::shared_ptr<TokenConstraint> makeJsonConstraint(std::shared_ptr<const TokenTrie> trie, int32_t eos,
                                                    std::string_view schemaJson, int maxTokens)
{
    const bool empty = schemaJson.find_first_not_of(" \t\r\n") == std::string_view::npos;
    auto schema = empty ? Schema::anyObject() : Schema::compile(schemaJson);
    return std::make_shared<JsonConstraint>(std::move(trie), eos, std::move(schema), maxTokens);
}

} // namespace waste::text

namespace waste {

namespace {

std::shared_ptr<const text::TokenTrie> trieOf(const Model &model)
{
    const ModelInfo &info = model.info();
    // Ordinary tokens are the ranks below BOS (the reference puts BOS, EOS and every
    // special after the last rank); the rest are markup and never part of JSON text.
    int32_t ordinary = info.vocab;
    if (info.bosId > 0)
        ordinary = std::min(ordinary, info.bosId);
    std::vector<std::string> bytes(static_cast<size_t>(std::max(info.vocab, 0)));
    for (int32_t id = 0; id < ordinary; ++id)
        bytes[static_cast<size_t>(id)] = model.tokenText(id);
    return std::make_shared<const text::TokenTrie>(std::move(bytes));
}

} // namespace

std::shared_ptr<TokenConstraint> makeJsonConstraint(const Model &model, std::string_view schemaJson, int maxTokens)
{
    return text::makeJsonConstraint(trieOf(model), model.info().eosId, schemaJson, maxTokens);
}

std::shared_ptr<TokenConstraint> makeToolCallConstraint(const Model &model, std::string_view toolsJson,
                                                        std::string_view functionName, int maxTokens)
{
    return text::makeJsonConstraint(trieOf(model), model.info().eosId, text::toolCallSchema(toolsJson, functionName),
                                    maxTokens);
}

} // namespace waste
