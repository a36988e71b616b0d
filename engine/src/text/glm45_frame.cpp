// GLM's reply frame (glm_template.cpp; TextReplyParser with CallSyntax::ArgPairs reads it
// back):
//   \n<think> reasoning </think> (GLM reasons first unless the prompt closed the think
//   block, thinking off; free text at once when the prompt opened <think>, as GLM-4.7's does)
//   answer: \nJSON <|user|>   (the turn ends by handing back to the user; GLM-4.7 writes no
//   newline before the answer)
//   call:   \n<tool_call>NAME\n <arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n ...
//           </tool_call> <|observation|>   (one pair per argument, a string raw; GLM-4.7
//           writes none of those newlines; the turn ends by handing over to the tool)
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

#include "waste/waste.hpp"

namespace waste::text {

namespace {

class Glm45Framer final : public ReplyFramer {
public:
    Glm45Framer(const Tokenizer &tok, std::span<const int32_t> prompt, bool oneLine)
        : m_tok(tok), m_nl(oneLine ? "" : "\n")
    {
        FrameTokens t(tok);
        m_end = t.marker("<|user|>");
        m_toTool = t.marker("<|observation|>");
        for (const char *m : {"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"})
            t.marker(m); // refuses a vocabulary without GLM's call markup, by name
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

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        ArgumentLayout layout;
        layout.head = [nl = m_nl](FrameTokens &t, const std::string &key, bool) {
            t.markup("<arg_key>").text(key).markup("</arg_key>" + nl + "<arg_value>");
        };
        layout.tail = "</arg_value>" + m_nl;
        layout.close = "</tool_call>";
        layout.stop = "</arg_value>";
        ReplyFrame f{m_reasoning, {}};
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            b.prefix = FrameTokens(m_tok).markup(m_nl + "<tool_call>").text(name).markup(m_nl).take();
            b.arguments = argumentList(m_tok, params, layout);
            b.suffix = {m_toTool};
            f.branches.push_back(std::move(b));
        }
        return f;
    }

private:
    const Tokenizer &m_tok;
    std::string m_nl; // GLM-4.5's newline between parts of a call; none in GLM-4.7's
    int32_t m_end = -1, m_toTool = -1;
    std::vector<int32_t> m_lead; // the newline before the answer, after the think block
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> glm45Framer(const Tokenizer &tok, std::span<const int32_t> prompt, bool oneLine)
{
    return std::make_unique<Glm45Framer>(tok, prompt, oneLine);
}

} // namespace waste::text
