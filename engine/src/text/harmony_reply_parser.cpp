#include "text/harmony_reply_parser.hpp"

#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

constexpr const char *kChannelMark = "<|channel|>";
constexpr const char *kConstrainMark = "<|constrain|>";

// The word after `key` in a header, up to whitespace or the next written-out special.
std::string wordAfter(const std::string &header, const std::string &key)
{
    const size_t at = header.find(key);
    if (at == std::string::npos)
        return {};
    const size_t from = at + key.size();
    size_t to = header.find_first_of(" \t\r\n<", from);
    if (to == std::string::npos)
        to = header.size();
    return header.substr(from, to - from);
}

// Longer than any header a model writes (role, recipient, channel, constraint): what
// grows past it without reaching <|message|> is text, not a header.
constexpr size_t kMaxHeaderBytes = 256;

// Whether the header text so far can still become one: it names a channel, or it is
// (a start of) the role "assistant" and/or a recipient " to=NAME" that a <|channel|>
// will follow.
bool couldBeHeader(std::string_view h)
{
    if (h.size() > kMaxHeaderBytes)
        return false;
    if (h.find(kChannelMark) != std::string_view::npos)
        return true;
    constexpr std::string_view role = "assistant", to = "to=";
    if (role.substr(0, h.size()) == h)
        return true;
    if (h.substr(0, role.size()) == role)
        h.remove_prefix(role.size());
    const size_t a = h.find_first_not_of(kReplyWs);
    if (a == std::string_view::npos)
        return true;
    h.remove_prefix(a);
    if (to.substr(0, h.size()) == h)
        return true;
    if (h.substr(0, to.size()) != to)
        return false;
    // The recipient is one word; only whitespace may follow it before <|channel|>.
    const size_t end = h.find_first_of(kReplyWs);
    return end == std::string_view::npos || h.find_first_not_of(kReplyWs, end) == std::string_view::npos;
}

} // namespace

HarmonyReplyParser::HarmonyReplyParser(const Tokenizer &tok)
    : m_tok(tok), m_start(tok.specialId("<|start|>")), m_end(tok.specialId("<|end|>")),
      m_message(tok.specialId("<|message|>")), m_channel(tok.specialId(kChannelMark)),
      m_constrain(tok.specialId(kConstrainMark)), m_return(tok.specialId("<|return|>")),
      m_call(tok.specialId("<|call|>"))
{
}

// At <|message|>: the header says where the body goes.
void HarmonyReplyParser::openBody()
{
    const std::string recipient = wordAfter(m_header, "to=");
    const std::string channel = wordAfter(m_header, kChannelMark);
    m_header.clear();
    if (!recipient.empty() && recipient != "user" && recipient != "all") {
        m_callName = recipient.rfind("functions.", 0) == 0 ? recipient.substr(10) : recipient;
        m_args.clear();
        m_mode = Mode::Call;
        return;
    }
    // A later message of a channel that already has text starts a new paragraph.
    (channel == "analysis" ? m_reasoning : m_content).breakParagraph();
    m_mode = channel == "analysis" ? Mode::Reasoning : Mode::Content;
}

// The header text read so far was the reply's text: it becomes content (without the role).
void HarmonyReplyParser::releaseHeaderAsContent(ReplyDelta &d)
{
    std::string_view text = m_header;
    if (text.substr(0, 9) == "assistant")
        text.remove_prefix(9);
    m_content.emit(text, d.content, m_reply.content);
    m_header.clear();
    m_mode = Mode::Content;
}

// A message's body ends: a UTF-8 sequence it left unfinished is let go with it (as
// U+FFFD), so the text of a message arrives with the message's own tokens.
void HarmonyReplyParser::endMessage(ReplyDelta &d)
{
    if (m_mode == Mode::Reasoning)
        m_reasoning.flush(d.reasoning, m_reply.reasoning);
    else if (m_mode == Mode::Content)
        m_content.flush(d.content, m_reply.content);
}

void HarmonyReplyParser::endCall(ReplyDelta &d)
{
    ToolCall call;
    call.id = "call_" + std::to_string(++m_callCount);
    call.name = m_callName;
    call.arguments = trimReplyWs(m_args);
    if (call.arguments.empty())
        call.arguments = "{}";
    m_reply.toolCalls.push_back(call);
    d.toolCalls.push_back(std::move(call));
    m_callName.clear();
    m_args.clear();
}

ReplyDelta HarmonyReplyParser::feed(int32_t token)
{
    ReplyDelta d;
    if (m_done) {
        d.done = true;
        return d;
    }
    if (token == m_return || token == m_call)
        return finish(); // the end of the reply (a call waits for its result)
    if (token == m_end) {
        if (m_mode == Mode::Call)
            endCall(d);
        endMessage(d);
        m_mode = Mode::Between;
        return d;
    }
    if (token == m_start) {
        if (m_mode == Mode::Call)
            endCall(d);
        endMessage(d);
        m_header.clear();
        m_mode = Mode::Header;
        return d;
    }
    if (m_mode == Mode::Header || m_mode == Mode::Between) {
        // A header written without <|start|> (the model skipped <|end|><|start|>) is still a header.
        if (m_mode == Mode::Between && token != m_channel)
            return d; // text between messages is layout
        m_mode = Mode::Header;
        if (token == m_message)
            openBody();
        else if (token == m_channel)
            m_header += kChannelMark;
        else if (token == m_constrain)
            m_header += kConstrainMark;
        else
            m_header.append(m_tok.textPiece(token));
        // A reply without a header (plain text, or bare JSON under a constraint) is content
        // from here on: released now, not held to the end of a stream.
        if (m_mode == Mode::Header && !couldBeHeader(m_header))
            releaseHeaderAsContent(d);
        return d;
    }
    const std::string_view bytes = m_tok.textPiece(token);
    if (m_mode == Mode::Reasoning)
        m_reasoning.emit(bytes, d.reasoning, m_reply.reasoning);
    else if (m_mode == Mode::Content)
        m_content.emit(bytes, d.content, m_reply.content);
    else
        m_args.append(bytes);
    return d;
}

ReplyDelta HarmonyReplyParser::finish()
{
    ReplyDelta d;
    if (!m_done) {
        if (m_mode == Mode::Call) {
            endCall(d);
        } else if (m_mode == Mode::Header && m_header.find(kChannelMark) == std::string::npos &&
                   m_header.find("to=") == std::string::npos) {
            // No header was written at all: the reply is plain text (bare JSON under a constraint).
            releaseHeaderAsContent(d);
        }
        m_header.clear();
        m_reasoning.flush(d.reasoning, m_reply.reasoning);
        m_content.flush(d.content, m_reply.content);
        m_done = true;
    }
    d.done = true;
    return d;
}

} // namespace waste::text
