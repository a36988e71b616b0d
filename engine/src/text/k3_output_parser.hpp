// Reads a K3 reply token by token into reasoning, content and tool calls.
//
// Structure comes only from the special token ids (<|open|>, <|close|>, <|sep|>,
// <|end_of_msg|>): a model that writes "<|sep|>" as ordinary text produces text, not
// structure. The parse starts inside the channel the prompt opened (think or
// response). Malformed structure degrades to text rather than losing it.
#pragma once

#include "text/chat_reply.hpp"
#include "text/utf8_stream.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

class Tokenizer;

class K3OutputParser final : public ReplyParser {
public:
    // `tok` must outlive the parser.
    K3OutputParser(const Tokenizer &tok, bool startInThink);

    ReplyDelta feed(int32_t token) override;
    // End of generation (EOS, a stop, the token limit): flushes held text and any
    // unfinished tool call.
    ReplyDelta finish() override;

    const ChatReply &reply() const override { return m_reply; }

private:
    enum class Mode { Body, OpenHeader, CloseHeader };
    struct Element {
        std::string tag;
        std::vector<std::pair<std::string, std::string>> attrs;
    };

    void bodyText(std::string_view bytes, ReplyDelta &d);
    void openElement(const std::string &header, ReplyDelta &d);
    void closeElement(const std::string &tag, ReplyDelta &d);
    void finishArgument();
    void finishCall(ReplyDelta &d);
    std::string channel() const; // the innermost element that holds text

    const Tokenizer &m_tok;
    int32_t m_open, m_close, m_sep, m_end;
    Mode m_mode = Mode::Body;
    std::string m_header;
    std::vector<Element> m_stack;
    Utf8StreamDecoder m_reasoningUtf8, m_contentUtf8;
    ChatReply m_reply;
    bool m_done = false;

    // the call being read
    bool m_inCall = false;
    ToolCall m_call;
    nlohmann::ordered_json m_args = nlohmann::ordered_json::object();
    std::string m_rawArgs;
    bool m_hasRaw = false;
    // the argument being read
    std::string m_argKey, m_argType, m_argText;
    int m_callCount = 0;
};

// Whether a K3 prompt leaves generation in the think channel: the last element it opens
// (<|open|>header<|sep|>) is `think`.
bool k3PromptOpensThink(const Tokenizer &tok, std::span<const int32_t> prompt);
// The same from the ids of <|open|> and <|sep|> and a way to decode ids to bytes.
bool k3PromptOpensThink(std::span<const int32_t> prompt, int32_t open, int32_t sep,
                        const std::function<std::string(std::span<const int32_t>)> &decode);

// Parses the attributes of an XTML header such as `call tool="x" index="1"`.
std::vector<std::pair<std::string, std::string>> parseXtmlAttributes(std::string_view header, std::string &tag);

} // namespace waste::text
