// Qwen3.5's reply frame (qwen35_template.cpp; TextReplyParser with CallSyntax::XmlFunction
// reads it back):
//   reasoning </think>\n\n (the generation prompt opened <think>; none when it closed an
//   empty think block, thinking off)
//   answer: JSON <|im_end|>
//   call:   <tool_call>\n<function=NAME>\n <parameter=KEY>\nVALUE\n</parameter>\n ...
//           </function>\n</tool_call> <|im_end|>   (one block per argument, a string raw)
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

#include "waste/waste.hpp"

namespace waste::text {

namespace {

class Qwen35Framer final : public ReplyFramer {
public:
    Qwen35Framer(const Tokenizer &tok, std::span<const int32_t> prompt) : m_tok(tok)
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

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        FrameTokens(m_tok).marker("<tool_call>"); // refuses a vocabulary without it, by name
        ArgumentLayout layout;
        layout.head = [](FrameTokens &t, const std::string &key, bool) {
            t.markup("<parameter=").text(key).markup(">\n");
        };
        layout.tail = "\n</parameter>\n";
        layout.close = "</function>\n</tool_call>";
        layout.stop = "</parameter>";
        ReplyFrame f{m_reasoning, {}};
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            b.prefix = FrameTokens(m_tok).markup("<tool_call>\n<function=").text(name).markup(">\n").take();
            b.arguments = argumentList(m_tok, params, layout);
            b.suffix = {m_end};
            f.branches.push_back(std::move(b));
        }
        return f;
    }

private:
    const Tokenizer &m_tok;
    int32_t m_end = -1;
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> qwen35Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<Qwen35Framer>(tok, prompt);
}

} // namespace waste::text
