#include "text/tagged_reply_parser.hpp"

#include "text/arg_pairs_call.hpp"
#include "text/xml_function_call.hpp"
#include "text/deepseek_markers.hpp"
#include "text/dsml_call.hpp"
#include "text/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>

namespace waste::text {

namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";

// Length of the longest suffix of `s` that is a proper prefix of `marker`.
size_t partialMarker(std::string_view s, std::string_view marker)
{
    for (size_t k = std::min(s.size(), marker.size() - 1); k > 0; --k)
        if (s.substr(s.size() - k) == marker.substr(0, k))
            return k;
    return 0;
}

bool isDsml(CallSyntax s) { return s == CallSyntax::DsmlToolCalls || s == CallSyntax::DsmlFunctionCalls; }
// The DSML block's tag name: V4's tool_calls, V3.2's function_calls.
std::string dsmlBlock(CallSyntax s) { return s == CallSyntax::DsmlToolCalls ? "tool_calls" : "function_calls"; }

} // namespace

TaggedReplyParser::TaggedReplyParser(bool startInThink, CallSyntax syntax)
    : m_mode(startInThink ? Mode::Think : Mode::Start), m_syntax(syntax),
      m_callOpen(isDsml(syntax) ? "<" + deepseek::kDsml + dsmlBlock(syntax) + ">" : std::string(kCallOpen)),
      m_callClose(isDsml(syntax) ? "</" + deepseek::kDsml + dsmlBlock(syntax) + ">" : std::string(kCallClose))
{
}

void TaggedReplyParser::setMarkup(std::span<const SpecialToken> markup)
{
    m_markup = markup;
    m_openMarkup.clear();
    for (const SpecialToken &m : markup)
        if (!m.text.empty() && m_callOpen.find(m.text) != std::string::npos)
            m_openMarkup.push_back(m.text);
}

void TaggedReplyParser::emitContent(std::string_view text, ReplyDelta &d)
{
    // A piece of the opening tag that was held and then not followed by the rest of it (a
    // "<｜DSML｜" and then other words) is text, but its markup token is not: never shown.
    for (const std::string &m : m_openMarkup)
        if (text.find(m) != std::string_view::npos) {
            std::string clean(text);
            for (const std::string &k : m_openMarkup)
                for (size_t at = clean.find(k); at != std::string::npos; at = clean.find(k, at))
                    clean.erase(at, k.size());
            m_content.emit(clean, d.content, m_reply.content);
            return;
        }
    m_content.emit(text, d.content, m_reply.content);
}

void TaggedReplyParser::endCall(ReplyDelta &d)
{
    using Json = nlohmann::ordered_json;
    bool ok = false;
    ToolCall call;
    if (isDsml(m_syntax)) { // one block, any number of calls
        if (auto calls = parseDsmlCalls(m_callBody)) {
            for (DsmlCall &c : *calls) {
                ToolCall one;
                one.name = std::move(c.name);
                one.arguments = std::move(c.arguments);
                one.id = "call_" + std::to_string(++m_callCount);
                m_reply.toolCalls.push_back(one);
                d.toolCalls.push_back(std::move(one));
            }
            m_callBody.clear();
            m_mode = Mode::Content;
            return;
        }
    } else if (m_syntax == CallSyntax::ArgPairs) {
        if (auto pairs = parseArgPairsCall(m_callBody)) {
            const auto declared = m_strings.find(pairs->name);
            call.arguments = argumentsJson(pairs->arguments, declared == m_strings.end() ? nullptr : &declared->second);
            call.name = std::move(pairs->name);
            ok = true;
        }
    } else if (m_syntax == CallSyntax::XmlFunction) {
        if (auto xml = parseXmlFunctionCall(m_callBody)) {
            const auto declared = m_strings.find(xml->name);
            call.arguments = argumentsJson(xml->arguments, declared == m_strings.end() ? nullptr : &declared->second);
            call.name = std::move(xml->name);
            ok = true;
        }
    } else {
        try {
            const Json j = Json::parse(m_callBody);
            if (j.is_object() && j.contains("name") && j.at("name").is_string()) {
                call.name = j.at("name").get<std::string>();
                const Json args = j.contains("arguments") ? j.at("arguments") : Json::object();
                call.arguments = args.is_string() ? args.get<std::string>() : args.dump();
                ok = true;
            }
        } catch (const Json::exception &) {
        }
    }
    if (ok) {
        call.id = "call_" + std::to_string(++m_callCount);
        m_reply.toolCalls.push_back(call);
        d.toolCalls.push_back(std::move(call));
    } else {
        // Not a call after all (unclosed, or not in the format's syntax): what the model wrote
        // in it is content, its markup is not (a stray <tool_call> or <arg_key> is never text).
        for (const SpecialToken &m : m_markup)
            for (size_t at = m_callBody.find(m.text); !m.text.empty() && at != std::string::npos; at = m_callBody.find(m.text, at))
                m_callBody.erase(at, m.text.size());
        m_content.emit(m_callBody, d.content, m_reply.content);
    }
    m_callBody.clear();
    m_mode = Mode::Content;
}

void TaggedReplyParser::process(ReplyDelta &d)
{
    while (!m_pending.empty()) {
        switch (m_mode) {
        case Mode::Start: {
            const size_t a = m_pending.find_first_not_of(kReplyWs);
            if (a == std::string::npos)
                return; // only whitespace so far: <think> may still come
            const std::string_view rest = std::string_view(m_pending).substr(a);
            if (rest.substr(0, kThinkOpen.size()) == kThinkOpen) {
                m_pending.erase(0, a + kThinkOpen.size());
                m_mode = Mode::Think;
            } else if (rest.size() < kThinkOpen.size() && kThinkOpen.substr(0, rest.size()) == rest) {
                return; // "<thi": wait
            } else {
                m_mode = Mode::Content;
            }
            break;
        }
        case Mode::Think: {
            const size_t at = m_pending.find(kThinkClose);
            if (at == std::string::npos) {
                const size_t keep = partialMarker(m_pending, kThinkClose);
                m_reasoning.emit(std::string_view(m_pending).substr(0, m_pending.size() - keep), d.reasoning, m_reply.reasoning);
                m_pending.erase(0, m_pending.size() - keep);
                return;
            }
            m_reasoning.emit(std::string_view(m_pending).substr(0, at), d.reasoning, m_reply.reasoning);
            m_pending.erase(0, at + kThinkClose.size());
            // A character the reasoning left unfinished ends with it (as U+FFFD), so no
            // reasoning follows the answer in a stream.
            m_reasoning.flush(d.reasoning, m_reply.reasoning);
            m_mode = Mode::Content;
            break;
        }
        case Mode::Content: {
            const size_t at = m_pending.find(m_callOpen);
            if (at == std::string::npos) {
                const size_t keep = partialMarker(m_pending, m_callOpen);
                emitContent(std::string_view(m_pending).substr(0, m_pending.size() - keep), d);
                m_pending.erase(0, m_pending.size() - keep);
                return;
            }
            emitContent(std::string_view(m_pending).substr(0, at), d);
            m_pending.erase(0, at + m_callOpen.size());
            m_mode = Mode::Call;
            break;
        }
        case Mode::Call: {
            const size_t at = m_pending.find(m_callClose);
            if (at == std::string::npos) {
                const size_t keep = partialMarker(m_pending, m_callClose);
                m_callBody.append(m_pending, 0, m_pending.size() - keep);
                m_pending.erase(0, m_pending.size() - keep);
                return;
            }
            m_callBody.append(m_pending, 0, at);
            m_pending.erase(0, at + m_callClose.size());
            endCall(d);
            break;
        }
        }
    }
}

bool TaggedReplyParser::wantsMarkup(std::string_view piece) const
{
    if (m_mode == Mode::Call) {
        // Only the call syntax's own markup, which its parser reads: a piece of the closing
        // tag (DSML's ｜DSML｜ also opens its invokes and parameters), and GLM's argument tags.
        // Any other markup in a call (a </think>, a role token) would end up in a tool's name
        // or arguments, or in the text an undeclared call is shown as.
        if (m_callClose.find(piece) != std::string::npos)
            return true;
        return m_syntax == CallSyntax::ArgPairs && isArgPairsTag(piece);
    }
    if (piece == kThinkOpen)
        return m_mode == Mode::Start;
    if (piece == kThinkClose)
        return m_mode == Mode::Think;
    if (m_mode == Mode::Think)
        return false;
    const std::string held = m_pending + std::string(piece);
    for (size_t k = 0; k <= m_pending.size(); ++k) {
        const std::string_view tail = std::string_view(held).substr(k);
        if (tail.size() <= m_callOpen.size() && std::string_view(m_callOpen).substr(0, tail.size()) == tail)
            return true;
    }
    return false;
}

ReplyDelta TaggedReplyParser::push(std::string_view bytes)
{
    ReplyDelta d;
    if (m_finished) {
        d.done = true;
        return d;
    }
    m_pending.append(bytes);
    process(d);
    return d;
}

ReplyDelta TaggedReplyParser::finish()
{
    ReplyDelta d;
    if (m_finished) {
        d.done = true;
        return d;
    }
    switch (m_mode) {
    case Mode::Start:
    case Mode::Content:
        emitContent(m_pending, d);
        break;
    case Mode::Think:
        m_reasoning.emit(m_pending, d.reasoning, m_reply.reasoning);
        break;
    case Mode::Call:
        m_callBody += m_pending;
        endCall(d);
        break;
    }
    m_pending.clear();
    m_reasoning.flush(d.reasoning, m_reply.reasoning);
    m_content.flush(d.content, m_reply.content);
    m_finished = true;
    d.done = true;
    return d;
}

TextReplyParser::TextReplyParser(const Tokenizer &tok, bool startInThink)
    : TextReplyParser(tok, startInThink, CallSyntax::Json, std::array<const char *, 1>{"<|im_end|>"})
{
}

TextReplyParser::TextReplyParser(const Tokenizer &tok, bool startInThink, CallSyntax syntax,
                                 std::span<const char *const> ends)
    : m_tok(tok), m_parser(startInThink, syntax)
{
    for (const char *e : ends)
        if (const int32_t id = tok.specialId(e); id >= 0)
            m_ends.push_back(id);
    m_parser.setMarkup(tok.specials());
}

ReplyDelta TextReplyParser::feed(int32_t token)
{
    if (std::find(m_ends.begin(), m_ends.end(), token) != m_ends.end())
        return m_parser.finish();
    const std::string_view piece = m_tok.textPiece(token);
    if (m_tok.isAdded(token) && !m_parser.wantsMarkup(piece))
        return {}; // a special token where the format has none: never shown as text
    return m_parser.push(piece);
}

ReplyDelta TextReplyParser::finish() { return m_parser.finish(); }

bool promptEndsInThink(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    const size_t n = std::min<size_t>(prompt.size(), 16);
    std::string tail = tok.decode(prompt.subspan(prompt.size() - n));
    const size_t b = tail.find_last_not_of(kReplyWs);
    tail.resize(b == std::string::npos ? 0 : b + 1);
    return tail.size() >= kThinkOpen.size() && tail.compare(tail.size() - kThinkOpen.size(), kThinkOpen.size(), kThinkOpen) == 0;
}

} // namespace waste::text
