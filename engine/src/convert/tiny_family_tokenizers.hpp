// Tokenizer files for the tiny models of the DeepSeek-V3, Kimi K2, Qwen3, gpt-oss and GLM-4.5
// families, in the layout each release ships: tokenizer.json + tokenizer_config.json
// (deepseek-v3, qwen3-moe, qwen3-next, gpt-oss, glm4-moe) or tiktoken.model +
// tokenizer_config.json (kimi-k2). The vocabulary is a small byte-level BPE learned here
// with the family's own split pattern from a mixed text (prose, code, CJK, emoji,
// digits); the family's special tokens follow it, and tokenizer_config.json names BOS,
// EOS and a chat template in the family's format.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace waste::convert {

struct TinyFamilyTokenizer {
    std::map<std::string, std::string> files; // file name -> contents
    int32_t bosId = -1;                       // -1: the family has no BOS (Qwen3)
    int32_t eosId = -1;                       // the end of an assistant turn
    int32_t padId = -1;
    std::vector<int> stopIds;                 // every id config.json's eos_token_id lists (GLM-4.5: three)
    int32_t vocabSize = 0;                    // as asked (gpt-oss: 201088): every id is below it
};

// Whether `arch` is one of the families above.
bool hasTinyFamilyTokenizer(std::string_view arch);

// The files for `arch` with ids below `vocabSize` (at least 384). gpt-oss keeps its
// specials at the release's ids (o200k_harmony: <|start|> 200006, ... up to 201087), so
// there `vocabSize` bounds the learned words only. Throws waste::Error
// (Argument) for another arch or a vocabulary too small for the family's specials.
// releaseIds false: gpt-oss's named specials follow the learned words as the other
// families' do, and its reserved ones are left out.
// `chatTemplate` picks which release's chat format the template follows, where a family
// has two: "deepseek-r1" (the default) or "deepseek-v3.1" for deepseek-v3,
// "kimi-k2-thinking" (the default) or "kimi-k2-instruct" for kimi-k2; empty: the default.
TinyFamilyTokenizer tinyFamilyTokenizer(std::string_view arch, int vocabSize, bool releaseIds = true,
                                        std::string_view chatTemplate = {});

// The same, written into `dir` (created if needed).
TinyFamilyTokenizer writeTinyFamilyTokenizer(const std::string &dir, std::string_view arch, int vocabSize);

} // namespace waste::convert
