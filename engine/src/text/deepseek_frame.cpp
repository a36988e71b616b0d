// DeepSeek's reply frames (family_reply_parser.hpp reads them back), one framer for both
// release templates, as each writes an assistant turn:
//   [reasoning </think>] only when the prompt ends in <think> (R1's does unless thinking
//   is off; V3.1's when thinking is on); R1 follows </think> with "\n\n"
//   answer: JSON <｜end▁of▁sentence｜>
//   call, R1:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n JSON
//               \n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
//   call, V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜> JSON
//               <｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
//               (no "function" type, no ```json fence)
#include "text/deepseek_markers.hpp"
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

using namespace deepseek;

// What sets the two templates' replies apart.
struct Layout {
    bool fencedCall;          // R1: "function" type, name and a ```json fence around the arguments
    std::string_view afterThink; // what the reply writes after </think>
};

constexpr Layout kR1{true, "\n\n"};
constexpr Layout kV31{false, ""};

class DeepSeekFramer final : public ReplyFramer {
public:
    DeepSeekFramer(const Tokenizer &tok, std::span<const int32_t> prompt, Layout layout)
        : m_tok(tok), m_layout(layout)
    {
        FrameTokens t(tok);
        m_end = t.marker(kEos);
        for (const std::string *m : {&kCallsBegin, &kCallBegin, &kSep, &kCallEnd, &kCallsEnd})
            t.marker(*m);
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
        FrameTokens close(m_tok);
        if (m_layout.fencedCall)
            close.text("\n```");
        std::vector<int32_t> suffix = close.markup(kCallEnd + kCallsEnd).take();
        suffix.push_back(m_end);
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            FrameTokens open(m_tok);
            open.markup(kCallsBegin + kCallBegin);
            if (m_layout.fencedCall)
                open.text("function").markup(kSep).text(name + "\n```json\n");
            else
                open.text(name).markup(kSep);
            b.prefix = open.take();
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
            FrameTokens t(m_tok);
            f.reasoning.close = {t.marker("</think>")};
            const std::vector<int32_t> after = t.markup(m_layout.afterThink).take();
            f.reasoning.close.insert(f.reasoning.close.end(), after.begin(), after.end());
        }
        return f;
    }

    const Tokenizer &m_tok;
    Layout m_layout;
    int32_t m_end = -1;
    bool m_think = false;
};

} // namespace

std::unique_ptr<ReplyFramer> deepSeekFramer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<DeepSeekFramer>(tok, prompt, kR1);
}

std::unique_ptr<ReplyFramer> deepSeekV31Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<DeepSeekFramer>(tok, prompt, kV31);
}

} // namespace waste::text
