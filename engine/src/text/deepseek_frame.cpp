// DeepSeek's reply frames (R1's template, family_reply_parser.hpp reads them back):
//   [reasoning ... </think>\n\n] (when the prompt opened <think>; R1's does unless thinking is off)
//   answer: JSON <｜end▁of▁sentence｜>
//   call:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n JSON
//           \n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
// as the template writes an assistant turn's calls.
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

// DeepSeek's markers: full-width bars, ▁ for spaces.
std::string marker(const char *inner)
{
    std::string s = "<\xEF\xBD\x9C";
    for (const char *p = inner; *p; ++p)
        s += *p == ' ' ? std::string("\xE2\x96\x81") : std::string(1, *p);
    return s + "\xEF\xBD\x9C>";
}

class DeepSeekFramer final : public ReplyFramer {
public:
    DeepSeekFramer(const Tokenizer &tok, std::span<const int32_t> prompt) : m_tok(tok)
    {
        FrameTokens t(tok);
        m_end = t.marker(marker("end of sentence"));
        for (const char *m : {"tool calls begin", "tool call begin", "tool sep", "tool call end", "tool calls end"})
            t.marker(marker(m));
        m_think = promptEndsWithToken(tok, prompt, tok.specialId("<think>"));
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
        const std::vector<int32_t> suffix =
            FrameTokens(m_tok).text("\n```").markup(marker("tool call end") + marker("tool calls end")).take();
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            b.prefix = FrameTokens(m_tok)
                           .markup(marker("tool calls begin") + marker("tool call begin"))
                           .text("function")
                           .markup(marker("tool sep"))
                           .text(name + "\n```json\n")
                           .take();
            b.schema = Schema::compile(params.dump());
            b.suffix = suffix;
            b.suffix.push_back(m_end);
            f.branches.push_back(std::move(b));
        }
        return f;
    }

private:
    ReplyFrame start() const
    {
        ReplyFrame f;
        if (m_think) {
            f.reasoning.allowed = true;
            FrameTokens t(m_tok);
            t.marker("</think>");
            f.reasoning.close = t.markup("</think>").markup("\n\n").take();
        }
        return f;
    }

    const Tokenizer &m_tok;
    int32_t m_end = -1;
    bool m_think = false;
};

} // namespace

std::unique_ptr<ReplyFramer> deepSeekFramer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<DeepSeekFramer>(tok, prompt);
}

} // namespace waste::text
