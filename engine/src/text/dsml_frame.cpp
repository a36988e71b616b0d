// DeepSeek-V3.2's and V4's reply frame (deepseek_v32_template.cpp, dsv4_template.cpp;
// TextReplyParser with a DSML call syntax reads it back):
//   [reasoning </think>] only when the prompt ends in <think> (thinking on)
//   answer: JSON <｜end▁of▁sentence｜>
//   call:   \n\n<｜DSML｜BLOCK>\n<｜DSML｜invoke name="NAME">\n
//           <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter> (one per
//           argument, a line apart; a string raw, string="true")
//           \n</｜DSML｜invoke>\n</｜DSML｜BLOCK> <｜end▁of▁sentence｜>
//   (BLOCK: V3.2's function_calls, V4's tool_calls; dsml_call.cpp writes a call so)
#include "text/deepseek_markers.hpp"
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

#include "waste/waste.hpp"

namespace waste::text {

namespace {

class DsmlFramer final : public ReplyFramer {
public:
    DsmlFramer(const Tokenizer &tok, std::span<const int32_t> prompt, const char *block)
        : m_tok(tok), m_block(block)
    {
        FrameTokens t(tok);
        m_end = t.marker(deepseek::kEos);
        if (promptEndsWithToken(tok, prompt, tok.specialId("<think>"))) {
            m_reasoning.allowed = true;
            m_reasoning.close = {t.marker("</think>")};
        }
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        return reasonedAnswer(m_reasoning, schema, m_end);
    }

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        const std::string d = deepseek::kDsml;
        ArgumentLayout layout;
        layout.head = [d](FrameTokens &t, const std::string &key, bool raw) {
            t.markup("<" + d + "parameter name=\"").text(key).markup(raw ? "\" string=\"true\">" : "\" string=\"false\">");
        };
        layout.tail = "</" + d + "parameter>";
        layout.separator.assign(1, '\n'); // (not = "\n": GCC 12 warns of an overlap that is not there)
        layout.close = "\n</" + d + "invoke>\n</" + d + m_block + ">";
        layout.stop = layout.tail;
        ReplyFrame f{m_reasoning, {}};
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            b.prefix = FrameTokens(m_tok)
                           .markup("\n\n<" + d + m_block + ">\n")
                           .markup("<" + d + "invoke name=\"")
                           .text(name)
                           .markup("\">\n")
                           .take();
            b.arguments = argumentList(m_tok, params, layout);
            b.suffix = {m_end};
            f.branches.push_back(std::move(b));
        }
        return f;
    }

private:
    const Tokenizer &m_tok;
    std::string m_block;
    int32_t m_end = -1;
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> dsmlFramer(const Tokenizer &tok, std::span<const int32_t> prompt, const char *family)
{
    return std::make_unique<DsmlFramer>(tok, prompt, family);
}

} // namespace waste::text
