// Reads a gpt-oss reply in the harmony format token by token. The prompt ends with
// <|start|>assistant, so the reply is one or more messages, each a header and a body:
//   <|channel|>analysis<|message|>REASONING<|end|>
//   <|start|>assistant<|channel|>final<|message|>ANSWER<|return|>
//   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>ARGS<|call|>
// (the recipient may also stand in the role part: "assistant to=functions.NAME<|channel|>...").
// analysis is reasoning; final, and commentary without a recipient (a preamble shown to
// the user), are content; a message to a recipient is a tool call ("functions." is
// dropped from its name). <|return|> and <|call|> end the reply. Structure comes only
// from the specials' token ids, so text that spells them stays text.
// Whitespace at the start of each channel is dropped and a trailing run is held until
// text follows it; an unfinished call at the end is released as a call with what it
// has; text that cannot be a header (a reply forced into bare JSON, or a model that
// writes none) is content, released as soon as that is clear (a stream does not wait
// for the end); a header cut off after naming a channel or recipient is dropped.
#pragma once

#include "text/chat_reply.hpp"
#include "text/reply_channel.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace waste::text {

class Tokenizer;

class HarmonyReplyParser final : public ReplyParser {
public:
    // `tok` must outlive the parser and hold the harmony specials.
    explicit HarmonyReplyParser(const Tokenizer &tok);

    ReplyDelta feed(int32_t token) override;
    ReplyDelta finish() override;
    const ChatReply &reply() const override { return m_reply; }

private:
    enum class Mode { Header, Reasoning, Content, Call, Between };
    void openBody();
    void endCall(ReplyDelta &d);
    void releaseHeaderAsContent(ReplyDelta &d);
    void endMessage(ReplyDelta &d);

    const Tokenizer &m_tok;
    int32_t m_start, m_end, m_message, m_channel, m_constrain, m_return, m_call;
    Mode m_mode = Mode::Header;
    std::string m_header; // the current header, <|channel|> and <|constrain|> written out
    std::string m_callName, m_args;
    ReplyChannel m_reasoning, m_content;
    ChatReply m_reply;
    int m_callCount = 0;
    bool m_done = false;
};

} // namespace waste::text
