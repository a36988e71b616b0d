#include "text/reply_parsers.hpp"

#include "text/family_reply_parser.hpp"
#include "text/harmony_reply_parser.hpp"
#include "text/k3_output_parser.hpp"
#include "text/tagged_reply_parser.hpp"
#include "text/tokenizer.hpp"

namespace waste::text {

std::unique_ptr<ReplyParser> replyParserFor(ChatFormat format, const Tokenizer &tok, std::span<const int32_t> prompt)
{
    switch (format) {
    case ChatFormat::K3:
        return std::make_unique<K3OutputParser>(tok, k3PromptOpensThink(tok, prompt));
    case ChatFormat::Harmony:
        return std::make_unique<HarmonyReplyParser>(tok);
    case ChatFormat::DeepSeek:
    case ChatFormat::DeepSeekV31:
    case ChatFormat::KimiK2:
    case ChatFormat::KimiK2Instruct:
        return std::make_unique<FamilyReplyParser>(
            tok,
            format == ChatFormat::DeepSeek || format == ChatFormat::DeepSeekV31 ? FamilyReplyParser::Family::DeepSeek
                                                                                : FamilyReplyParser::Family::KimiK2,
            promptEndsWithToken(tok, prompt, tok.specialId("<think>")));
    case ChatFormat::Glm45:
    case ChatFormat::Glm47: {
        // The turn ends where the model hands over: to the user, to a tool, or at the end.
        static constexpr const char *kEnds[] = {"<|user|>", "<|observation|>", "<|endoftext|>"};
        return std::make_unique<TextReplyParser>(tok, promptEndsInThink(tok, prompt), CallSyntax::ArgPairs, kEnds);
    }
    case ChatFormat::Qwen35: {
        // The prompt opens <think> unless thinking is off; the turn ends at <|im_end|> (or
        // <|endoftext|>, which the release's generation_config also stops on).
        static constexpr const char *kEnds[] = {"<|im_end|>", "<|endoftext|>"};
        return std::make_unique<TextReplyParser>(tok, promptEndsInThink(tok, prompt), CallSyntax::XmlFunction, kEnds);
    }
    case ChatFormat::DeepSeekV32:
    case ChatFormat::DeepSeekV4: {
        // Reasoning up to </think> when the prompt opened <think>; content, then one DSML
        // block of calls; EOS ends the turn.
        static constexpr const char *kEnds[] = {"<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};
        return std::make_unique<TextReplyParser>(tok, promptEndsInThink(tok, prompt),
                                                 format == ChatFormat::DeepSeekV4 ? CallSyntax::DsmlToolCalls
                                                                                  : CallSyntax::DsmlFunctionCalls,
                                                 kEnds);
    }
    case ChatFormat::Plain:
    case ChatFormat::ChatMl:
    case ChatFormat::Qwen3:
        break;
    }
    return std::make_unique<TextReplyParser>(tok, promptEndsInThink(tok, prompt));
}

} // namespace waste::text
