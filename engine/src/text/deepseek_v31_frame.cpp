// DeepSeek-V3.1's reply frames (its template; family_reply_parser.hpp reads them back):
//   [reasoning </think>] (only when the prompt ends in <think>: thinking on; a prompt
//   ending in </think> or in a tool result has none)
//   answer: JSON <｜end▁of▁sentence｜>
//   call:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜> JSON
//           <｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
// as the template writes an assistant turn's calls (no "function" type, no ```json fence).
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

std::string marker(const char *inner) // full-width bars, ▁ for spaces
{
    std::string s = "<\xEF\xBD\x9C";
    for (const char *p = inner; *p; ++p)
        s += *p == ' ' ? std::string("\xE2\x96\x81") : std::string(1, *p);
    return s + "\xEF\xBD\x9C>";
}

class DeepSeekV31Framer final : public ReplyFramer {
public:
    DeepSeekV31Framer(const Tokenizer &tok, std::span<const int32_t> prompt) : m_tok(tok)
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
        std::vector<int32_t> suffix =
            FrameTokens(m_tok).markup(marker("tool call end") + marker("tool calls end")).take();
        suffix.push_back(m_end);
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            b.prefix = FrameTokens(m_tok)
                           .markup(marker("tool calls begin") + marker("tool call begin"))
                           .text(name)
                           .markup(marker("tool sep"))
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
        if (m_think) {
            f.reasoning.allowed = true;
            f.reasoning.close = {FrameTokens(m_tok).marker("</think>")};
        }
        return f;
    }

    const Tokenizer &m_tok;
    int32_t m_end = -1;
    bool m_think = false;
};

} // namespace

std::unique_ptr<ReplyFramer> deepSeekV31Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<DeepSeekV31Framer>(tok, prompt);
}

} // namespace waste::text
