// K3's reply frames (XTML, k3_template.hpp), read back by K3OutputParser:
//   answer: [think ... <|close|>think<|sep|><|open|>response<|sep|>] JSON
//           <|close|>response<|sep|> <|close|>message<|sep|><|end_of_msg|>
//   call:   [think ... as above] <|close|>response<|sep|><|open|>tools<|sep|>
//           <|open|>call tool="NAME" index="1"<|sep|><|open|>argument type="json"<|sep|> JSON
//           <|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|> end of message
// The think channel is free text when the prompt opened it; the model may not open it itself.
#include "text/k3_output_parser.hpp"
#include "text/k3_template.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

class K3Framer final : public ReplyFramer {
public:
    K3Framer(const Tokenizer &tok, std::span<const int32_t> prompt) : m_tok(tok)
    {
        FrameTokens t(tok);
        for (const char *m : {"<|open|>", "<|close|>", "<|sep|>", kK3EndOfMessage})
            t.marker(m); // refuses a vocabulary without K3's markup, by name
        m_think = k3PromptOpensThink(tok, prompt);
    }

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f = start();
        f.branches.push_back({{}, schema, endOf({"response"})});
        return f;
    }

    ReplyFrame call(const ToolSchemas &tools) const override
    {
        ReplyFrame f = start();
        const std::vector<int32_t> suffix = endOf({"argument", "call", "tools"});
        for (const auto &[name, params] : tools) {
            FramedJsonConstraint::Branch b;
            add(b.prefix, k3CloseSegments("response"));
            add(b.prefix, k3OpenSegments("tools", {}));
            add(b.prefix, k3OpenSegments("call", {{"tool", name}, {"index", "1"}}));
            add(b.prefix, k3OpenSegments("argument", {{"type", "json"}}));
            b.schema = Schema::compile(params.dump());
            b.suffix = suffix;
            f.branches.push_back(std::move(b));
        }
        return f;
    }

private:
    void add(std::vector<int32_t> &out, const Segments &segs) const
    {
        for (const Segment &s : segs)
            m_tok.encodeTo(s.text, s.markup, out);
    }
    // Free text in the think channel when the prompt opened it; closing it opens the response.
    ReplyFrame start() const
    {
        ReplyFrame f;
        if (m_think) {
            f.reasoning.allowed = true;
            add(f.reasoning.close, k3CloseSegments("think"));
            add(f.reasoning.close, k3OpenSegments("response", {}));
        }
        return f;
    }
    // Closes `tags` in order, then the message.
    std::vector<int32_t> endOf(std::initializer_list<const char *> tags) const
    {
        std::vector<int32_t> out;
        for (const char *tag : tags)
            add(out, k3CloseSegments(tag));
        add(out, k3CloseSegments("message"));
        add(out, {{kK3EndOfMessage, true}});
        return out;
    }

    const Tokenizer &m_tok;
    bool m_think = false;
};

} // namespace

std::unique_ptr<ReplyFramer> k3Framer(const Tokenizer &tok, std::span<const int32_t> prompt)
{
    return std::make_unique<K3Framer>(tok, prompt);
}

} // namespace waste::text
