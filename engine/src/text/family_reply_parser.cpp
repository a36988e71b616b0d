#include "text/family_reply_parser.hpp"

#include "text/deepseek_markers.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

FamilyReplyParser::FamilyReplyParser(const Tokenizer &tok, Family family, bool startInThink)
    : m_tok(tok), m_family(family), m_mode(startInThink ? Mode::Think : Mode::Start)
{
    m_thinkOpen = tok.specialId("<think>");
    m_thinkClose = tok.specialId("</think>");
    if (family == Family::DeepSeek) {
        m_callsBegin = tok.specialId(deepseek::kCallsBegin);
        m_callsEnd = tok.specialId(deepseek::kCallsEnd);
        m_callBegin = tok.specialId(deepseek::kCallBegin);
        m_callArgs = tok.specialId(deepseek::kSep);
        m_callEnd = tok.specialId(deepseek::kCallEnd);
        m_ends = {tok.specialId(deepseek::kEos)};
    } else {
        m_callsBegin = tok.specialId("<|tool_calls_section_begin|>");
        m_callsEnd = tok.specialId("<|tool_calls_section_end|>");
        m_callBegin = tok.specialId("<|tool_call_begin|>");
        m_callArgs = tok.specialId("<|tool_call_argument_begin|>");
        m_callEnd = tok.specialId("<|tool_call_end|>");
        m_ends = {tok.specialId("<|im_end|>")};
    }
}

void FamilyReplyParser::endCall(ReplyDelta &d)
{
    ToolCall call;
    std::string header = trimReplyWs(m_header), body = m_args;
    if (m_family == Family::DeepSeek) {
        // R1/V3: "function" before the separator, "NAME\n```json\nARGS\n```" after it;
        // V3.1: the name before the separator and the arguments after it.
        const size_t nl = body.find('\n');
        const std::string rest = nl == std::string::npos ? std::string() : trimReplyWs(body.substr(nl + 1));
        if (nl != std::string::npos && rest.rfind("```", 0) == 0) {
            call.name = trimReplyWs(body.substr(0, nl));
            std::string args = rest.substr(3);
            if (args.rfind("json", 0) == 0)
                args.erase(0, 4);
            if (const size_t close = args.rfind("```"); close != std::string::npos)
                args.resize(close);
            call.arguments = trimReplyWs(args);
        } else {
            call.name = header;
            call.arguments = trimReplyWs(body);
        }
        call.id = "call_" + std::to_string(++m_callCount);
    } else {
        // "functions.NAME:INDEX" is the call's id; the name sits between the dot and the colon.
        std::string name = header;
        if (name.rfind("functions.", 0) == 0)
            name.erase(0, 10);
        if (const size_t colon = name.rfind(':'); colon != std::string::npos)
            name.resize(colon);
        call.name = name;
        call.arguments = trimReplyWs(body);
        ++m_callCount;
        call.id = header.empty() ? "call_" + std::to_string(m_callCount) : header;
    }
    if (call.arguments.empty())
        call.arguments = "{}";
    m_reply.toolCalls.push_back(call);
    d.toolCalls.push_back(std::move(call));
    m_header.clear();
    m_args.clear();
}

ReplyDelta FamilyReplyParser::feed(int32_t token)
{
    ReplyDelta d;
    if (m_done) {
        d.done = true;
        return d;
    }
    for (int32_t e : m_ends)
        if (e >= 0 && token == e)
            return finish();
    // The markup tokens this parser reads act by their ids below; any other markup token is a
    // stray and never text, wherever it comes (DeepSeek's tokenizer marks its tool and role
    // tokens as not special, so their text would otherwise pass for words).
    const std::string_view bytes = m_tok.isAdded(token) ? std::string_view() : m_tok.textPiece(token);
    if (m_mode == Mode::Start) {
        if (token == m_thinkOpen) {
            m_mode = Mode::Think;
            return d;
        }
        if (bytes.find_first_not_of(kReplyWs) == std::string_view::npos && token != m_callsBegin && token != m_callBegin)
            return d; // whitespace before <think> may still come
        m_mode = Mode::Content;
    }
    switch (m_mode) {
    case Mode::Start:
        break;
    case Mode::Think:
        if (token == m_thinkClose) {
            // A character the reasoning left unfinished ends with it (as U+FFFD), so no
            // reasoning follows the answer in a stream.
            m_reasoning.flush(d.reasoning, m_reply.reasoning);
            m_mode = Mode::Content;
        } else
            m_reasoning.emit(bytes, d.reasoning, m_reply.reasoning);
        break;
    case Mode::Content:
        if (token == m_callsBegin)
            m_mode = Mode::Calls;
        else if (token == m_callBegin)
            m_mode = Mode::CallHeader;
        else if (token != m_thinkOpen && token != m_thinkClose)
            m_content.emit(bytes, d.content, m_reply.content);
        break;
    case Mode::Calls:
        if (token == m_callBegin)
            m_mode = Mode::CallHeader;
        else if (token == m_callsEnd)
            m_mode = Mode::Content;
        break; // text between calls is layout
    case Mode::CallHeader:
        if (token == m_callArgs)
            m_mode = Mode::CallArgs;
        else
            m_header.append(bytes);
        break;
    case Mode::CallArgs:
        if (token == m_callEnd) {
            endCall(d);
            m_mode = Mode::Calls;
        } else {
            m_args.append(bytes);
        }
        break;
    }
    return d;
}

ReplyDelta FamilyReplyParser::finish()
{
    ReplyDelta d;
    if (!m_done) {
        if (m_mode == Mode::CallHeader || m_mode == Mode::CallArgs)
            endCall(d);
        m_reasoning.flush(d.reasoning, m_reply.reasoning);
        m_content.flush(d.content, m_reply.content);
        m_done = true;
    }
    d.done = true;
    return d;
}

bool promptEndsWithToken(const Tokenizer &tok, std::span<const int32_t> prompt, int32_t thinkOpen)
{
    if (thinkOpen < 0)
        return false;
    for (size_t i = prompt.size(); i-- > 0;) {
        if (prompt[i] == thinkOpen)
            return true;
        const std::string_view p = tok.piece(prompt[i]);
        if (p.find_first_not_of(kReplyWs) != std::string_view::npos)
            return false;
    }
    return false;
}

} // namespace waste::text
