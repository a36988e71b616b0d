// gpt-oss's reply frames in the harmony format (harmony_template.cpp writes the prompt,
// which ends with <|start|>assistant; HarmonyReplyParser reads the frames back):
//   reasoning: <|channel|>analysis<|message|> free text <|end|><|start|>assistant
//   answer:    <|channel|>final<|message|>JSON<|return|>
//   call:      <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>JSON<|call|>
// The analysis message always opens (it may stay empty): a harmony reply names its
// channel first, so a branch's header cannot follow the generation prompt both directly
// and after an analysis message. <|end|>, <|return|> and <|call|> are specials, so the
// free text ends exactly at <|end|> and none of them can appear inside the JSON.
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

class HarmonyFramer final : public ReplyFramer {
public:
    explicit HarmonyFramer(const Tokenizer &tok) : m_tok(tok)
    {
        FrameTokens t(tok);
        m_return = t.marker("<|return|>");
        m_call = t.marker("<|call|>");
        for (const char *m : {"<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|constrain|>"})
            t.marker(m);
        m_reasoning.allowed = true;
        m_reasoning.open = FrameTokens(tok).markup("<|channel|>analysis<|message|>").take();
        m_reasoning.close = FrameTokens(tok).markup("<|end|><|start|>assistant").take();
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f{m_reasoning, {}};
        f.branches.push_back({FrameTokens(m_tok).markup("<|channel|>final<|message|>").take(), schema, {m_return}});
        return f;
    }

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        ReplyFrame f{m_reasoning, {}};
        for (const auto &[name, params] : tools) {
            // The recipient in the channel part, as gpt-oss writes its calls; the name is text.
            std::vector<int32_t> prefix = FrameTokens(m_tok)
                                              .markup("<|channel|>")
                                              .text("commentary to=functions." + name + " ")
                                              .markup("<|constrain|>")
                                              .text("json")
                                              .markup("<|message|>")
                                              .take();
            f.branches.push_back({std::move(prefix), Schema::compile(params.dump()), {m_call}});
        }
        return f;
    }

private:
    const Tokenizer &m_tok;
    int32_t m_return = -1, m_call = -1;
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> harmonyFramer(const Tokenizer &tok) { return std::make_unique<HarmonyFramer>(tok); }

} // namespace waste::text
