#include "text/reply_frame.hpp"

#include "text/token_trie.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

FrameTokens &FrameTokens::markup(std::string_view s)
{
    m_tok.encodeTo(s, true, m_ids);
    return *this;
}

FrameTokens &FrameTokens::text(std::string_view s)
{
    m_tok.encodeTo(s, false, m_ids);
    return *this;
}

int32_t FrameTokens::marker(std::string_view s) const
{
    const int32_t id = m_tok.specialId(s);
    if (id < 0)
        throw Error(ErrorCode::Unsupported, "the model's vocabulary has no " + std::string(s) +
                                                " token, which its chat format needs for a constrained reply");
    return id;
}

std::unique_ptr<ReplyFramer> replyFramer(ChatFormat format, const Tokenizer &tok, std::span<const int32_t> prompt)
{
    switch (format) {
    case ChatFormat::Plain:
        return plainFramer(tok);
    case ChatFormat::ChatMl:
        return chatMlFramer(tok, prompt);
    case ChatFormat::K3:
        return k3Framer(tok, prompt);
    case ChatFormat::DeepSeek:
        return deepSeekFramer(tok, prompt);
    case ChatFormat::KimiK2:
        return kimiK2Framer(tok, prompt);
    case ChatFormat::Qwen3:
        return qwen3Framer(tok, prompt);
    case ChatFormat::Harmony:
        return harmonyFramer(tok);
    case ChatFormat::DeepSeekV31:
        return deepSeekV31Framer(tok, prompt);
    case ChatFormat::KimiK2Instruct:
        return kimiK2InstructFramer(tok, prompt);
    case ChatFormat::Glm45:
        return glm45Framer(tok, prompt, false);
    case ChatFormat::Glm47:
        return glm45Framer(tok, prompt, true);
    case ChatFormat::Qwen35:
        return qwen35Framer(tok, prompt);
    case ChatFormat::DeepSeekV32:
        return dsmlFramer(tok, prompt, "DeepSeek-V3.2");
    case ChatFormat::DeepSeekV4:
        return dsmlFramer(tok, prompt, "DeepSeek V4");
    }
    throw Error(ErrorCode::Unsupported, std::string("no reply frame for the chat format ") + chatFormatName(format));
}

ReplyFrame reasonedAnswer(const FramedJsonConstraint::Reasoning &reasoning, const std::shared_ptr<const Schema> &schema,
                          int32_t end)
{
    ReplyFrame f{reasoning, {}};
    f.branches.push_back({{}, schema, {end}});
    return f;
}

std::shared_ptr<TokenConstraint> frameConstraint(const ReplyFrame &frame, const Tokenizer &tok, int maxTokens)
{
    auto trie = std::make_shared<const TokenTrie>(TokenTrie::fromTokenizer(tok));
    return std::make_shared<FramedJsonConstraint>(std::move(trie), frame.reasoning, frame.branches, maxTokens,
                                                  tok.eosId());
}

} // namespace waste::text
