// Reads a DeepSeek or Kimi K2 reply token by token into reasoning, content and tool
// calls. Structure comes only from the family's marker token ids, so a model that writes
// a marker's characters as ordinary text produces text:
//   DeepSeek: [<think>] reasoning </think> content
//             <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//             ```json ARGS ```<｜tool▁call▁end｜> ... <｜tool▁calls▁end｜> <｜end▁of▁sentence｜>
//             (V3.1's <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜> too);
//   Kimi K2:  <think> reasoning </think> content <|tool_calls_section_begin|>
//             <|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>ARGS
//             <|tool_call_end|> ... <|tool_calls_section_end|> <|im_end|>.
// Whitespace at the start of each channel is dropped and a trailing run is held until
// text follows it; an unfinished call at the end is released as a call with what it has.
#pragma once

#include "text/chat_reply.hpp"
#include "text/reply_channel.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace waste::text {

class Tokenizer;

class FamilyReplyParser final : public ReplyParser {
public:
    enum class Family { DeepSeek, KimiK2 };
    // `tok` must outlive the parser; startInThink: the prompt opened <think> (R1).
    FamilyReplyParser(const Tokenizer &tok, Family family, bool startInThink);

    ReplyDelta feed(int32_t token) override;
    ReplyDelta finish() override;
    const ChatReply &reply() const override { return m_reply; }

private:
    enum class Mode { Start, Think, Content, Calls, CallHeader, CallArgs };
    void endCall(ReplyDelta &d);

    const Tokenizer &m_tok;
    Family m_family;
    int32_t m_thinkOpen, m_thinkClose, m_callsBegin, m_callsEnd, m_callBegin, m_callArgs, m_callEnd;
    std::vector<int32_t> m_ends;
    Mode m_mode;
    ReplyChannel m_reasoning, m_content;
    std::string m_header, m_args;
    ChatReply m_reply;
    int m_callCount = 0;
    bool m_done = false;
};

// Whether a prompt ends with the id `thinkOpen` (whitespace tokens after it aside).
bool promptEndsWithToken(const Tokenizer &tok, std::span<const int32_t> prompt, int32_t thinkOpen);

} // namespace waste::text
