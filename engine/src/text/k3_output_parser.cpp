#include "text/k3_output_parser.hpp"

#include "text/json_text.hpp"
#include "text/k3_elements.hpp"

#include "text/tokenizer.hpp"

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {
constexpr size_t kMaxHeader = 4096; // longer "headers" are text the model wrote, not structure

bool isBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }
} // namespace

std::vector<std::pair<std::string, std::string>> parseXtmlAttributes(std::string_view h, std::string &tag)
{
    std::vector<std::pair<std::string, std::string>> attrs;
    size_t i = h.find_first_not_of(" \t\r\n");
    if (i == std::string_view::npos) {
        tag.clear();
        return attrs;
    }
    size_t end = h.find_first_of(" \t\r\n", i);
    tag = std::string(h.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
    i = end;
    while (i != std::string_view::npos && i < h.size()) {
        i = h.find_first_not_of(" \t\r\n", i);
        if (i == std::string_view::npos)
            break;
        const size_t eq = h.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= h.size() || h[eq + 1] != '"')
            break;
        const size_t close = h.find('"', eq + 2);
        if (close == std::string_view::npos)
            break;
        attrs.emplace_back(std::string(h.substr(i, eq - i)), k3UnescapeAttribute(h.substr(eq + 2, close - eq - 2)));
        i = close + 1;
    }
    return attrs;
}

bool k3PromptOpensThink(std::span<const int32_t> prompt, int32_t open, int32_t sep,
                        const std::function<std::string(std::span<const int32_t>)> &decode)
{
    for (size_t i = prompt.size(); i-- > 0;) {
        if (prompt[i] != open)
            continue;
        size_t end = i + 1;
        while (end < prompt.size() && prompt[end] != sep)
            ++end;
        if (end == prompt.size())
            return false; // an unfinished header: not a channel
        std::string tag;
        parseXtmlAttributes(decode(prompt.subspan(i + 1, end - i - 1)), tag);
        return tag == "think";
    }
    return false;
}

bool k3PromptOpensThink(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return k3PromptOpensThink(prompt, tok.specialId("<|open|>"), tok.specialId("<|sep|>"),
                              [&](std::span<const int32_t> ids) { return tok.decode(ids); });
}

K3OutputParser::K3OutputParser(const Tokenizer &tok, bool startInThink)
    : m_tok(tok), m_open(tok.specialId("<|open|>")), m_close(tok.specialId("<|close|>")),
      m_sep(tok.specialId("<|sep|>")), m_end(tok.specialId("<|end_of_msg|>"))
{
    m_stack.push_back({"message", {}});
    m_stack.push_back({startInThink ? "think" : "response", {}});
}

std::string K3OutputParser::channel() const
{
    for (auto it = m_stack.rbegin(); it != m_stack.rend(); ++it) {
        if (it->tag == "think" || it->tag == "response" || it->tag == "argument")
            return it->tag;
        if (it->tag == "call" || it->tag == "tools")
            return it->tag;
    }
    return "response";
}

void K3OutputParser::bodyText(std::string_view bytes, ReplyDelta &d)
{
    const std::string ch = channel();
    if (ch == "think") {
        const std::string t = m_reasoningUtf8.push(bytes);
        d.reasoning += t;
        m_reply.reasoning += t;
    } else if (ch == "argument") {
        m_argText.append(bytes);
    } else if (ch == "call") {
        if (!isBlank(bytes) || m_hasRaw) { // text straight inside a call: arguments written raw
            m_rawArgs.append(bytes);
            m_hasRaw = true;
        }
    } else if (ch == "tools") {
        // whitespace between calls
    } else {
        const std::string t = m_contentUtf8.push(bytes);
        d.content += t;
        m_reply.content += t;
    }
}

void K3OutputParser::openElement(const std::string &header, ReplyDelta &d)
{
    Element e;
    e.attrs = parseXtmlAttributes(header, e.tag);
    auto attr = [&](const char *k) {
        for (const auto &[key, v] : e.attrs)
            if (key == k)
                return v;
        return std::string();
    };
    if (e.tag == "call") {
        if (m_inCall)
            finishCall(d);
        m_inCall = true;
        m_call = ToolCall{};
        m_call.name = attr("tool");
        m_args = Json::object();
        m_rawArgs.clear();
        m_hasRaw = false;
    } else if (e.tag == "argument") {
        m_argKey = attr("key");
        m_argType = attr("type");
        m_argText.clear();
    }
    m_stack.push_back(std::move(e));
}

void K3OutputParser::finishArgument()
{
    Json value;
    const std::string &t = m_argType;
    if (t == "json") {
        m_rawArgs += m_argText;
        m_hasRaw = true;
        return;
    }
    if (t == "null") {
        value = nullptr;
    } else if (t == "boolean" && (m_argText == "true" || m_argText == "false")) {
        value = m_argText == "true";
    } else if (t == "number" || t == "object" || t == "array") {
        try {
            value = Json::parse(m_argText);
            const bool fits = (t == "number" && value.is_number()) || (t == "object" && value.is_object()) ||
                              (t == "array" && value.is_array());
            if (!fits)
                value = m_argText;
        } catch (const Json::exception &) {
            value = m_argText;
        }
    } else {
        value = m_argText;
    }
    if (m_inCall)
        m_args[m_argKey] = std::move(value);
}

void K3OutputParser::finishCall(ReplyDelta &d)
{
    m_call.arguments = (m_hasRaw && m_args.empty()) ? m_rawArgs : compactJsonText(m_args);
    m_call.id = "call_" + std::to_string(++m_callCount);
    m_reply.toolCalls.push_back(m_call);
    d.toolCalls.push_back(m_call);
    m_inCall = false;
}

void K3OutputParser::closeElement(const std::string &tag, ReplyDelta &d)
{
    size_t at = m_stack.size();
    while (at > 0 && m_stack[at - 1].tag != tag)
        --at;
    if (at == 0)
        return; // closing something never opened: ignore
    while (m_stack.size() >= at) {
        const std::string popped = m_stack.back().tag;
        m_stack.pop_back();
        if (popped == "argument")
            finishArgument();
        else if (popped == "call" && m_inCall)
            finishCall(d);
    }
    if (tag == "message")
        m_done = true;
}

ReplyDelta K3OutputParser::feed(int32_t token)
{
    ReplyDelta d;
    if (m_done) {
        d.done = true;
        return d;
    }
    if (token == m_end)
        return finish();
    const std::string_view piece = m_tok.textPiece(token);
    if (token == m_open || token == m_close) {
        if (m_mode != Mode::Body) // an unfinished header is text after all
            bodyText(m_header, d);
        m_mode = token == m_open ? Mode::OpenHeader : Mode::CloseHeader;
        m_header.clear();
    } else if (token == m_sep) {
        if (m_mode == Mode::OpenHeader)
            openElement(m_header, d);
        else if (m_mode == Mode::CloseHeader) {
            std::string tag;
            parseXtmlAttributes(m_header, tag);
            closeElement(tag, d);
        } else
            bodyText(piece, d);
        m_mode = Mode::Body;
    } else if (m_mode != Mode::Body) {
        m_header.append(piece);
        if (m_header.size() > kMaxHeader) {
            m_mode = Mode::Body;
            bodyText(m_header, d);
        }
    } else {
        bodyText(piece, d);
    }
    if (m_done) {
        ReplyDelta rest = finish();
        d.reasoning += rest.reasoning;
        d.content += rest.content;
        d.toolCalls.insert(d.toolCalls.end(), rest.toolCalls.begin(), rest.toolCalls.end());
        d.done = true;
    }
    return d;
}

ReplyDelta K3OutputParser::finish()
{
    ReplyDelta d;
    if (m_mode != Mode::Body) {
        m_mode = Mode::Body;
        bodyText(m_header, d);
    }
    if (m_inCall) {
        if (channel() == "argument")
            finishArgument();
        finishCall(d);
    }
    const std::string r = m_reasoningUtf8.flush(), c = m_contentUtf8.flush();
    d.reasoning += r;
    m_reply.reasoning += r;
    d.content += c;
    m_reply.content += c;
    m_done = true;
    d.done = true;
    return d;
}

} // namespace waste::text
