// Qwen3's reply frames (qwen3_template.cpp; TextReplyParser reads them back):
//   <think>\n reasoning </think>\n\n (Qwen3 reasons first unless the prompt closed an empty
//   think block, "enable_thinking": false; free text at once when the prompt opened <think>)
//   answer: JSON <|im_end|>
//   call:   <tool_call>\n{"name": "NAME", "arguments": JSON}\n</tool_call><|im_end|>
// <think>, </think> and <tool_call> are vocabulary words of their own (added tokens), so
// the free text ends exactly at </think>, and none of them can appear inside the JSON.
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

class Qwen3Framer final : public ReplyFramer {
public:
    Qwen3Framer(const Tokenizer &tok, std::span<const int32_t> prompt) : m_tok(tok)
    {
        FrameTokens t(tok);
        m_end = t.marker("<|im_end|>");
        const int32_t open = t.marker("<think>"), close = t.marker("</think>");
        t.marker("<tool_call>");
        t.marker("</tool_call>");
        if (promptEndsWithToken(tok, prompt, close))
            return; // thinking off: the template closed an empty think block
        m_reasoning.allowed = true;
        if (!promptEndsWithToken(tok, prompt, open))
            tok.encodeTo("<think>\n", true, m_reasoning.open);
        tok.encodeTo("</think>\n\n", true, m_reasoning.close);
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f{m_reasoning, {}};
        f.branches.push_back({{}, schema, {m_end}});
        return f;
    }

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        ReplyFrame f{m_reasoning, {}};
        for (const auto &[name, params] : tools)
            f.branches.push_back(toolCallBlock(m_tok, {}, name, params, m_end));
        return f;
    }

private:
    const Tokenizer &m_tok;
    int32_t m_end = -1;
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> qwen3Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<Qwen3Framer>(tok, prompt);
}

} // namespace waste::text
