// DeepSeek-V3.2's and V4's reply frame (deepseek_v32_template.cpp, dsv4_template.cpp;
// TextReplyParser with a DSML call syntax reads it back):
//   [reasoning </think>] only when the prompt ends in <think> (thinking on)
//   answer: JSON <｜end▁of▁sentence｜>
// A forced call is refused: a DSML call writes each argument as its own parameter element,
// strings raw, which is not one JSON document a frame's schema can follow.
#include "text/deepseek_markers.hpp"
#include "text/family_reply_parser.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

#include "waste/waste.hpp"

namespace waste::text {

namespace {

class DsmlFramer final : public ReplyFramer {
public:
    DsmlFramer(const Tokenizer &tok, std::span<const int32_t> prompt, const char *family)
        : m_family(family)
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

    ReplyFrame call(const ToolSchemas &) const override
    {
        throw Error(ErrorCode::Unsupported,
                    std::string(m_family) + "'s chat format writes each tool argument as its own DSML parameter, which a "
                                            "forced tool call cannot be constrained to; let the model choose whether to "
                                            "call (tool_choice auto)");
    }

private:
    const char *m_family;
    int32_t m_end = -1;
    FramedJsonConstraint::Reasoning m_reasoning;
};

} // namespace

std::unique_ptr<ReplyFramer> dsmlFramer(const Tokenizer &tok, std::span<const int32_t> prompt, const char *family)
{
    return std::make_unique<DsmlFramer>(tok, prompt, family);
}

} // namespace waste::text
