#include "text/constraint_factory.hpp"

#include "text/framed_json_constraint.hpp"
#include "text/json_constraint.hpp"
#include "text/k3_output_parser.hpp"
#include "text/k3_template.hpp"

#include <nlohmann/json.hpp>

#include <optional>

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

std::vector<std::pair<std::string, json>> toolParameters(std::string_view toolsJson, std::string_view functionName)
{
    json tools;
    try {
        tools = json::parse(toolsJson);
    } catch (const json::exception &e) {
        throw Error(ErrorCode::Argument, std::string("tools are not valid JSON: ") + e.what());
    }
    if (!tools.is_array())
        throw Error(ErrorCode::Argument, "tools must be a JSON array");
    std::vector<std::pair<std::string, json>> out;
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
    json branches = json::array();
    auto tools = toolParameters(toolsJson, functionName);
    for (auto &[name, params] : tools) {
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

// K3's markup, when the model's vocabulary has it as special tokens.
struct K3Frame {
    const Model &model;
    bool think = false; // the prompt opened the think channel

    static std::optional<K3Frame> of(const Model &model, std::span<const int32_t> prompt)
    {
        if (model.info().chatFormat != ChatFormat::K3)
            return std::nullopt;
        int32_t ids[4];
        const char *marks[4] = {"<|open|>", "<|close|>", "<|sep|>", text::kK3EndOfMessage};
        for (int i = 0; i < 4; ++i) {
            const std::vector<int32_t> t = model.tokenize(marks[i], true);
            if (t.size() != 1 || (model.info().bosId > 0 && t[0] < model.info().bosId))
                return std::nullopt;
            ids[i] = t[0];
        }
        K3Frame f{model};
        f.think = text::k3PromptOpensThink(prompt, ids[0], ids[2], [&](std::span<const int32_t> s) {
            return model.detokenize(s);
        });
        return f;
    }
    void add(std::vector<int32_t> &out, const text::Segments &segs) const
    {
        for (const text::Segment &s : segs) {
            const std::vector<int32_t> t = model.tokenize(s.text, s.markup);
            out.insert(out.end(), t.begin(), t.end());
        }
    }
    void open(std::vector<int32_t> &out, const std::string &tag,
              const std::vector<std::pair<std::string, std::string>> &attrs = {}) const
    {
        add(out, text::k3OpenSegments(tag, attrs));
    }
    void close(std::vector<int32_t> &out, const std::string &tag) const { add(out, text::k3CloseSegments(tag)); }
    void endMessage(std::vector<int32_t> &out) const
    {
        close(out, "message");
        add(out, {{text::kK3EndOfMessage, true}});
    }
    std::shared_ptr<TokenConstraint> make(std::vector<text::FramedJsonConstraint::Branch> branches, int maxTokens) const
    {
        return std::make_shared<text::FramedJsonConstraint>(trieOf(model), std::move(branches), think, maxTokens,
                                                             model.info().eosId);
    }
};

} // namespace

std::shared_ptr<TokenConstraint> makeJsonConstraint(const Model &model, std::string_view schemaJson, int maxTokens,
                                                    std::span<const int32_t> prompt)
{
    if (const auto k3 = K3Frame::of(model, prompt)) {
        // [think ... <|close|>think<|sep|><|open|>response<|sep|>] JSON <|close|>response<|sep|> end of message
        text::FramedJsonConstraint::Branch b;
        if (k3->think) {
            k3->close(b.prefix, "think");
            k3->open(b.prefix, "response");
        }
        const bool empty = schemaJson.find_first_not_of(" \t\r\n") == std::string_view::npos;
        b.schema = empty ? text::Schema::anyObject() : text::Schema::compile(schemaJson);
        k3->close(b.suffix, "response");
        k3->endMessage(b.suffix);
        return k3->make({std::move(b)}, maxTokens);
    }
    return text::makeJsonConstraint(trieOf(model), model.info().eosId, schemaJson, maxTokens);
}

std::shared_ptr<TokenConstraint> makeToolCallConstraint(const Model &model, std::string_view toolsJson,
                                                        std::string_view functionName, int maxTokens,
                                                        std::span<const int32_t> prompt)
{
    if (const auto k3 = K3Frame::of(model, prompt)) {
        // [think ... <|close|>think<|sep|><|open|>response<|sep|>] <|close|>response<|sep|><|open|>tools<|sep|>
        // <|open|>call tool="NAME" index="1"<|sep|><|open|>argument type="json"<|sep|> JSON
        // <|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|> end of message
        std::vector<int32_t> common;
        if (k3->think) {
            k3->close(common, "think");
            k3->open(common, "response");
        }
        k3->close(common, "response");
        k3->open(common, "tools");
        std::vector<int32_t> suffix;
        k3->close(suffix, "argument");
        k3->close(suffix, "call");
        k3->close(suffix, "tools");
        k3->endMessage(suffix);
        std::vector<text::FramedJsonConstraint::Branch> branches;
        for (const auto &[name, params] : text::toolParameters(toolsJson, functionName)) {
            text::FramedJsonConstraint::Branch b;
            b.prefix = common;
            k3->open(b.prefix, "call", {{"tool", name}, {"index", "1"}});
            k3->open(b.prefix, "argument", {{"type", "json"}});
            b.schema = text::Schema::compile(params.dump());
            b.suffix = suffix;
            branches.push_back(std::move(b));
        }
        return k3->make(std::move(branches), maxTokens);
    }
    return text::makeJsonConstraint(trieOf(model), model.info().eosId, text::toolCallSchema(toolsJson, functionName),
                                    maxTokens);
}

} // namespace waste
