// Qwen3.5's reply frame (qwen35_template.cpp; TextReplyParser with CallSyntax::XmlFunction
// reads it back):
//   reasoning </think>\n\n (the generation prompt opened <think>; none when it closed an
//   empty think block, thinking off)
//   answer: JSON <|im_end|>
// A forced call is refused: Qwen3.5 writes each argument as its own <parameter=KEY> block,
// which is not one JSON document a frame's schema can follow.
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

#include "waste/waste.hpp"

namespace waste::text {

namespace {

class Qwen35Framer final : public ReplyFramer {
public:
    Qwen35Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
    {
        FrameTokens t(tok);
        m_end = t.marker("<|im_end|>");
        const int32_t open = t.marker("<think>"), close = t.marker("</think>");
        if (promptEndsWithToken(tok, prompt, close))
            return; // thinking off: the template closed an empty think block
        m_reasoning.allowed = true;
        if (!promptEndsWithToken(tok, prompt, open))
            tok.encodeTo("<think>\n", true, m_reasoning.open);
        tok.encodeTo("</think>\n\n", true, m_reasoning.close);
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        return reasonedAnswer(m_reasoning, schema, m_end);
    }

    ReplyFrame call(const ToolSchemas &) const override
    {
        throw Error(ErrorCode::Unsupported,
                    "Qwen3.5's chat format writes each tool argument as its own <parameter=...> block, which a forced "
                    "tool call cannot be constrained to; let the model choose whether to call (tool_choice auto)");
    }

private:
    int32_t m_end = -1;
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> qwen35Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<Qwen35Framer>(tok, prompt);
}

} // namespace waste::text
