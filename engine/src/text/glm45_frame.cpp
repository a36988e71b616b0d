// GLM's reply frame (glm_template.cpp; TextReplyParser with CallSyntax::ArgPairs reads it
// back):
//   \n<think> reasoning </think> (GLM reasons first unless the prompt closed the think
//   block, thinking off; free text at once when the prompt opened <think>, as GLM-4.7's does)
//   answer: \nJSON <|user|>   (the turn ends by handing back to the user; GLM-4.7 writes no
//   newline before the answer)
// A forced call is refused: GLM writes each argument as its own <arg_key>/<arg_value> pair,
// which is not one JSON document a frame's schema can follow.
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

#include "waste/waste.hpp"

namespace waste::text {

namespace {

class Glm45Framer final : public ReplyFramer {
public:
    Glm45Framer(const Tokenizer &tok, std::span<const int32_t> prompt, bool oneLine)
    {
        FrameTokens t(tok);
        m_end = t.marker("<|user|>");
        const int32_t open = t.marker("<think>"), close = t.marker("</think>");
        if (promptEndsWithToken(tok, prompt, close))
            return; // thinking off: the template closed an empty think block
        m_reasoning.allowed = true;
        if (!promptEndsWithToken(tok, prompt, open))
            tok.encodeTo("\n<think>", true, m_reasoning.open);
        tok.encodeTo("</think>", true, m_reasoning.close);
        if (!oneLine)
            tok.encodeTo("\n", true, m_lead);
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f{m_reasoning, {}};
        f.branches.push_back({m_lead, schema, {m_end}});
        return f;
    }

    ReplyFrame call(const ToolSchemas &) const override
    {
        throw Error(ErrorCode::Unsupported,
                    "GLM-4.5's chat format writes each tool argument as its own <arg_key>/<arg_value> pair, which a "
                    "forced tool call cannot be constrained to; let the model choose whether to call (tool_choice auto)");
    }

private:
    int32_t m_end = -1;
    std::vector<int32_t> m_lead; // the newline before the answer, after the think block
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> glm45Framer(const Tokenizer &tok, std::span<const int32_t> prompt, bool oneLine)
{
    return std::make_unique<Glm45Framer>(tok, prompt, oneLine);
}

} // namespace waste::text
