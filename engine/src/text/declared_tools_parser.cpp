#include "text/declared_tools_parser.hpp"

#include "text/plain_template.hpp"
#include "text/tagged_reply_parser.hpp"

#include <nlohmann/json.hpp>

#include <utility>

namespace waste::text {

using Json = nlohmann::json; // keys sorted: a call shown as text reads the same every time

namespace {

// {"name": ..., "arguments": {...} or "<json>"}: a call when the name is declared.
bool readCall(const Json &v, const std::set<std::string> &declared, ReplyToolCall &call)
{
    if (!v.is_object() || !v.contains("name") || !v.at("name").is_string())
        return false;
    const std::string name = v.at("name").get<std::string>();
    if (!declared.contains(name))
        return false;
    Json args = v.contains("arguments") && !v.at("arguments").is_null() ? v.at("arguments")
                : v.contains("parameters")                              ? v.at("parameters")
                                                                        : Json();
    if (args.is_string()) {
        try {
            args = Json::parse(args.get<std::string>());
        } catch (const Json::exception &) {
            return false;
        }
        if (!args.is_object())
            return false;
    }
    if (args.is_null())
        args = Json::object();
    if (!args.is_object())
        return false;
    call.name = name;
    call.arguments = args.dump();
    return true;
}

} // namespace

std::vector<ReplyToolCall> bareJsonCalls(std::string_view content, const std::set<std::string> &declared)
{
    Json doc;
    try {
        doc = Json::parse(content);
    } catch (const Json::exception &) {
        return {};
    }
    std::vector<ReplyToolCall> calls;
    const auto one = [&](const Json &v) {
        ReplyToolCall c;
        if (!readCall(v, declared, c))
            return false;
        calls.push_back(std::move(c));
        return true;
    };
    if (doc.is_object()) {
        if (!one(doc))
            return {};
    } else if (doc.is_array() && !doc.empty()) {
        for (const Json &v : doc)
            if (!one(v))
                return {};
    }
    return calls;
}

DeclaredToolsParser::DeclaredToolsParser(std::unique_ptr<ReplyParser> inner, ChatFormat format, std::string_view toolsJson)
    : m_inner(std::move(inner))
{
    if (!toolsJson.empty()) {
        Json tools;
        try {
            tools = Json::parse(toolsJson);
        } catch (const Json::exception &e) {
            throw Error(ErrorCode::Argument, std::string("tools: not valid JSON: ") + e.what());
        }
        if (!tools.is_array())
            throw Error(ErrorCode::Argument, "tools: must be an array");
        for (const Json &t : tools) {
            const Json &fn = t.is_object() && t.contains("function") ? t.at("function") : t;
            if (fn.is_object() && fn.contains("name") && fn.at("name").is_string())
                m_names.insert(fn.at("name").get<std::string>());
        }
    }
    m_mayBeBareJson = !m_names.empty() && !chatFormatTraits(format).replaysParsedTurns;
    // A string-typed argument written as text stays the string the tool declares.
    if (auto *text = dynamic_cast<TextReplyParser *>(m_inner.get()); text && !m_names.empty())
        text->setStringArguments(stringArgumentsOf(toolsJson));
}

void DeclaredToolsParser::take(const ReplyToolCall &call, ReplyDelta &out)
{
    if (!m_names.contains(call.name)) {
        out.content += toolCallJson(call.name, call.arguments); // its arguments are JSON text
        return;
    }
    ReplyToolCall c = call;
    c.id = "call_" + std::to_string(++m_calls);
    out.toolCalls.push_back(std::move(c));
}

ReplyDelta DeclaredToolsParser::pass(ReplyDelta in, bool end)
{
    ReplyDelta out;
    out.reasoning = std::move(in.reasoning);
    out.done = in.done;
    out.content = std::move(in.content);
    for (const ReplyToolCall &c : in.toolCalls)
        take(c, out);

    if (m_mayBeBareJson && !m_decided) {
        // Leading blanks are held until the first character says what the content is.
        m_held += out.content;
        out.content.clear();
        const size_t first = m_held.find_first_not_of(" \n\r\t");
        if (first != std::string::npos) {
            m_decided = true;
            m_holding = m_held[first] == '{' || m_held[first] == '[';
            if (!m_holding)
                out.content = std::exchange(m_held, {});
        }
    } else if (m_holding) {
        m_held += out.content;
        out.content.clear();
    }
    if (end && !m_held.empty()) {
        std::vector<ReplyToolCall> calls = m_holding ? bareJsonCalls(m_held, m_names) : std::vector<ReplyToolCall>{};
        if (calls.empty()) {
            out.content += m_held;
        } else {
            for (ReplyToolCall &c : calls) {
                c.id = "call_" + std::to_string(++m_calls);
                out.toolCalls.push_back(std::move(c));
            }
        }
        m_held.clear();
    }
    m_reply.reasoning += out.reasoning;
    m_reply.content += out.content;
    m_reply.toolCalls.insert(m_reply.toolCalls.end(), out.toolCalls.begin(), out.toolCalls.end());
    return out;
}

ReplyDelta DeclaredToolsParser::feed(int32_t token)
{
    if (m_finished)
        return {};
    return pass(m_inner->feed(token), false);
}

ReplyDelta DeclaredToolsParser::finish()
{
    if (m_finished)
        return {};
    m_finished = true;
    return pass(m_inner->finish(), true);
}

} // namespace waste::text
