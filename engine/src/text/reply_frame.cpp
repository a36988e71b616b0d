#include "text/reply_frame.hpp"

#include "text/argument_types.hpp"
#include "text/token_trie.hpp"
#include "text/tokenizer.hpp"

#include <algorithm>

namespace waste::text {

FrameTokens &FrameTokens::markup(std::string_view s)
{
    m_tok.encodeTo(s, true, m_ids);
    return *this;
}

FrameTokens &FrameTokens::text(std::string_view s)
{
    m_tok.encodeTo(s, false, m_ids);
    return *this;
}

int32_t FrameTokens::marker(std::string_view s) const
{
    const int32_t id = m_tok.specialId(s);
    if (id < 0)
        throw Error(ErrorCode::Unsupported, "the model's vocabulary has no " + std::string(s) +
                                                " token, which its chat format needs for a constrained reply");
    return id;
}

std::unique_ptr<ReplyFramer> replyFramer(ChatFormat format, const Tokenizer &tok, std::span<const int32_t> prompt)
{
    switch (format) {
    case ChatFormat::Plain:
        return plainFramer(tok);
    case ChatFormat::ChatMl:
        return chatMlFramer(tok, prompt);
    case ChatFormat::K3:
        return k3Framer(tok, prompt);
    case ChatFormat::DeepSeek:
        return deepSeekFramer(tok, prompt);
    case ChatFormat::KimiK2:
        return kimiK2Framer(tok, prompt);
    case ChatFormat::Qwen3:
        return qwen3Framer(tok, prompt);
    case ChatFormat::Harmony:
        return harmonyFramer(tok);
    case ChatFormat::DeepSeekV31:
        return deepSeekV31Framer(tok, prompt);
    case ChatFormat::KimiK2Instruct:
        return kimiK2InstructFramer(tok, prompt);
    case ChatFormat::Glm45:
        return glm45Framer(tok, prompt, false);
    case ChatFormat::Glm47:
        return glm45Framer(tok, prompt, true);
    case ChatFormat::Qwen35:
        return qwen35Framer(tok, prompt);
    case ChatFormat::DeepSeekV32:
        return dsmlFramer(tok, prompt, "function_calls");
    case ChatFormat::DeepSeekV4:
        return dsmlFramer(tok, prompt, "tool_calls");
    }
    throw Error(ErrorCode::Unsupported, std::string("no reply frame for the chat format ") + chatFormatName(format));
}

ReplyFrame reasonedAnswer(const FramedJsonConstraint::Reasoning &reasoning, const std::shared_ptr<const Schema> &schema,
                          int32_t end)
{
    ReplyFrame f{reasoning, {}};
    f.branches.push_back({{}, schema, {end}});
    return f;
}

std::shared_ptr<const ArgumentList> argumentList(const Tokenizer &tok, const nlohmann::ordered_json &params,
                                                 const ArgumentLayout &layout)
{
    using Json = nlohmann::ordered_json;
    auto list = std::make_shared<ArgumentList>();
    const Json none = Json::object();
    const Json &props = params.is_object() && params.contains("properties") && params.at("properties").is_object()
                            ? params.at("properties")
                            : none;
    std::vector<std::string> required, optional;
    if (params.is_object() && params.contains("required") && params.at("required").is_array())
        for (const Json &r : params.at("required"))
            if (r.is_string() && std::find(required.begin(), required.end(), r.get<std::string>()) == required.end())
                required.push_back(r.get<std::string>());
    // Required ones in the order the properties list them, then any the properties do not name.
    std::vector<std::string> order;
    for (const auto &[key, schema] : props.items())
        if (std::find(required.begin(), required.end(), key) != required.end())
            order.push_back(key);
    for (const std::string &key : required)
        if (!props.contains(key))
            order.push_back(key);
    const size_t nRequired = order.size();
    for (const auto &[key, schema] : props.items())
        if (std::find(required.begin(), required.end(), key) == required.end())
            order.push_back(key);

    for (size_t i = 0; i < order.size(); ++i) {
        const std::string &key = order[i];
        Json schema = props.contains(key) ? props.at(key) : Json::object();
        if (schema.is_boolean())
            schema = schema.get<bool>() ? Json::object() : Json{{"not", Json::object()}};
        for (const char *defs : {"$defs", "definitions"})
            if (schema.is_object() && params.contains(defs) && !schema.contains(defs))
                schema[defs] = params.at(defs);
        ArgumentList::Element e;
        e.raw = isStringSchema(schema);
        FrameTokens head(tok);
        layout.head(head, key, e.raw);
        e.head = head.take();
        e.schema = Schema::compile(schema.dump());
        e.tail = FrameTokens(tok).markup(layout.tail).take();
        e.required = i < nRequired;
        list->elements.push_back(std::move(e));
    }
    list->separator = FrameTokens(tok).markup(layout.separator).take();
    list->close = FrameTokens(tok).markup(layout.close).take();
    list->stop = layout.stop;
    return list;
}

std::shared_ptr<TokenConstraint> frameConstraint(const ReplyFrame &frame, const Tokenizer &tok, int maxTokens)
{
    auto trie = std::make_shared<const TokenTrie>(TokenTrie::fromTokenizer(tok));
    return std::make_shared<FramedJsonConstraint>(std::move(trie), frame.reasoning, frame.branches, maxTokens,
                                                  tok.eosId());
}

} // namespace waste::text
