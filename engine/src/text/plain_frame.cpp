// The Plain format (no chat template: a front end writes a "role: text" transcript):
// the reply is the bare JSON document, then EOS. A call is the document
// {"name": <tool>, "arguments": {...}}, which the API server reads back from the text.
#include "text/constraint_factory.hpp"
#include "text/reply_frame.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

namespace {

class PlainFramer final : public ReplyFramer {
public:
    explicit PlainFramer(const Tokenizer &tok) : m_eos(tok.eosId()) {}

    ReplyFrame answer(const std::shared_ptr<const Schema> &schema) const override
    {
        ReplyFrame f;
        f.branches.push_back({{}, schema, {m_eos}});
        return f;
    }
    ReplyFrame call(const ToolSchemas &tools) const override
    {
        return answer(Schema::compile(toolCallSchema(tools)));
    }

private:
    int32_t m_eos;
};

} // namespace

std::unique_ptr<ReplyFramer> plainFramer(const Tokenizer &tok) { return std::make_unique<PlainFramer>(tok); }

} // namespace waste::text
