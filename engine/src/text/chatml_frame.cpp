// ChatML's reply frames (chatml_template.cpp; TextReplyParser reads them back as text):
//   answer: JSON <|im_end|>
//   call:   <tool_call>\n{"name": "NAME", "arguments": JSON}\n</tool_call><|im_end|>
// (EOS where the vocabulary has no <|im_end|>). A prompt that ends inside <think> is
// closed first, with no free reasoning: ChatML's </think> is text, not one marker token.
#include "text/reply_frame.hpp"
#include "text/tagged_reply_parser.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

FramedJsonConstraint::Branch toolCallBlock(const Tokenizer &tok, std::vector<int32_t> lead, const std::string &name,
                                           const nlohmann::ordered_json &params, int32_t end)
{
    FramedJsonConstraint::Branch b;
    // The document is the arguments: it ends where its object closes, and the block's
    // closing text follows.
    b.prefix = std::move(lead);
    tok.encodeTo("<tool_call>\n{\"name\": \"", true, b.prefix);
    tok.encodeTo(name, false, b.prefix);
    tok.encodeTo("\", \"arguments\":", true, b.prefix);
    b.schema = Schema::compile(params.dump());
    tok.encodeTo("}\n</tool_call>", true, b.suffix);
    b.suffix.push_back(end);
    return b;
}

namespace {

class ChatMlFramer final : public ReplyFramer {
public:
    ChatMlFramer(const Tokenizer &tok, std::span<const int32_t> prompt) : m_tok(tok)
    {
        const int32_t imEnd = tok.specialId("<|im_end|>");
        m_end = imEnd >= 0 ? imEnd : tok.eosId();
        if (promptEndsInThink(tok, prompt))
            tok.encodeTo("</think>\n\n", true, m_lead);
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f;
        f.branches.push_back({m_lead, schema, {m_end}});
        return f;
    }

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        ReplyFrame f;
        for (const auto &[name, params] : tools)
            f.branches.push_back(toolCallBlock(m_tok, m_lead, name, params, m_end));
        return f;
    }

private:
    const Tokenizer &m_tok;
    int32_t m_end = -1;
    std::vector<int32_t> m_lead;
};

} // namespace

std::unique_ptr<ReplyFramer> chatMlFramer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<ChatMlFramer>(tok, prompt);
}

} // namespace waste::text
