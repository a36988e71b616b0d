// Kimi K2's reply frames (K2-Thinking's and K2-Instruct's templates share the layout;
// family_reply_parser.hpp reads them back):
//   <think> reasoning </think> (K2-Thinking always reasons first; free text when the
//   prompt already opened <think>. K2-Instruct never reasons: no think block at all)
//   answer: JSON <|im_end|>
//   call:   <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0
//           <|tool_call_argument_begin|> JSON <|tool_call_end|><|tool_calls_section_end|><|im_end|>
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

class KimiK2Framer final : public ReplyFramer {
public:
    KimiK2Framer(const Tokenizer &tok, std::span<const int32_t> prompt, bool reasons) : m_tok(tok), m_reasons(reasons)
    {
        FrameTokens t(tok);
        m_end = t.marker("<|im_end|>");
        // K2-Instruct writes no think block, so its vocabulary need not have one.
        m_thinkOpen = reasons ? t.marker("<think>") : tok.specialId("<think>");
        m_thinkClose = reasons ? t.marker("</think>") : tok.specialId("</think>");
        for (const char *m : {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                              "<|tool_call_argument_begin|>", "<|tool_call_end|>"})
            t.marker(m);
        m_opened = promptEndsWithToken(tok, prompt, m_thinkOpen);
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f = start();
        f.branches.push_back({{}, schema, {m_end}});
        return f;
    }

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        ReplyFrame f = start();
        std::vector<int32_t> suffix =
            FrameTokens(m_tok).markup("<|tool_call_end|>").markup("<|tool_calls_section_end|>").take();
        suffix.push_back(m_end);
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            b.prefix = FrameTokens(m_tok)
                           .markup("<|tool_calls_section_begin|>")
                           .markup("<|tool_call_begin|>")
                           .text("functions." + name + ":0")
                           .markup("<|tool_call_argument_begin|>")
                           .take();
            b.schema = Schema::compile(params.dump());
            b.suffix = suffix;
            f.branches.push_back(std::move(b));
        }
        return f;
    }

private:
    ReplyFrame start() const
    {
        ReplyFrame f;
        if (!m_reasons)
            return f;
        f.reasoning.allowed = true;
        if (!m_opened)
            f.reasoning.open = {m_thinkOpen};
        f.reasoning.close = {m_thinkClose};
        return f;
    }

    const Tokenizer &m_tok;
    int32_t m_end = -1, m_thinkOpen = -1, m_thinkClose = -1;
    bool m_opened = false;
    bool m_reasons = true;
};

} // namespace

std::unique_ptr<ReplyFramer> kimiK2Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<KimiK2Framer>(tok, prompt, true);
}

std::unique_ptr<ReplyFramer> kimiK2InstructFramer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<KimiK2Framer>(tok, prompt, false);
}

} // namespace waste::text
