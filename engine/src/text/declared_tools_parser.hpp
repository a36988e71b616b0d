// A reply parser for a request that declared its tools (Model::replyParser with a tools
// array): the format's own parser, and on top of it the two rules every front end needs,
// kept here so that none of them reads calls itself:
//   - only calls of declared functions are calls; any other call the model writes is
//     shown as text, <tool_call>{"arguments": ..., "name": ...}</tool_call>;
//   - where the format writes each argument as text (GLM, Qwen3.5), a parameter the tool declares a
//     string keeps the text written even where it reads as JSON (argument_types.hpp);
//   - in the formats whose calls are text (all but K3, whose structure is special tokens),
//     a reply whose content starts with '{' or '[' may be the call written as bare JSON
//     (what a forced call's constraint writes in a plain transcript, and what ChatML models
//     often write): that content is held to the end, then read as calls of declared
//     functions ({"name", "arguments" or "parameters"}, or an array of those) or
//     released as the text it was.
#pragma once

#include "waste/chat.hpp"
#include "waste/waste.hpp"

#include <memory>
#include <set>
#include <string>
#include <string_view>

namespace waste::text {

class DeclaredToolsParser : public ReplyParser {
public:
    // toolsJson: an OpenAI "tools" array ([{"type": "function", "function": {"name": ...}}]);
    // empty or "[]": no tool is declared, so every call is text. Throws Error(Argument)
    // when it is not a JSON array.
    DeclaredToolsParser(std::unique_ptr<ReplyParser> inner, ChatFormat format, std::string_view toolsJson);

    ReplyDelta feed(int32_t token) override;
    ReplyDelta finish() override;
    const ChatReply &reply() const override { return m_reply; }

private:
    ReplyDelta pass(ReplyDelta in, bool end);
    void take(const ReplyToolCall &call, ReplyDelta &out);

    std::unique_ptr<ReplyParser> m_inner;
    std::set<std::string> m_names;
    bool m_mayBeBareJson = false;
    bool m_decided = false; // whether the content's first character has been seen
    bool m_holding = false; // the content may be a bare JSON call: held to the end
    std::string m_held;
    int m_calls = 0;
    bool m_finished = false;
    ChatReply m_reply;
};

// The calls a whole content holds when it is a bare JSON call of declared functions (an
// object or an array of them); empty when it is anything else.
std::vector<ReplyToolCall> bareJsonCalls(std::string_view content, const std::set<std::string> &declared);

} // namespace waste::text
