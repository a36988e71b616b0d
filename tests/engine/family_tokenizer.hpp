// The tokenizer of a tiny family model (DeepSeek-V3, Kimi K2, Qwen3, gpt-oss, GLM-4.5), built in
// memory from the files `waste mktiny --arch A` ships (convert/tiny_family_tokenizers),
// loaded the way a converted container loads them.
#pragma once

#include "convert/tiny_family_tokenizers.hpp"
#include "text/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <string>

inline waste::text::Tokenizer familyTokenizer(const std::string &arch, int vocabSize = 1024)
{
    using waste::text::Tokenizer;
    const waste::convert::TinyFamilyTokenizer t = waste::convert::tinyFamilyTokenizer(arch, vocabSize);
    if (t.files.count("tokenizer.json"))
        return Tokenizer::fromHfJson(t.files.at("tokenizer.json"), t.files.at("tokenizer_config.json"));
    // A rank file with its specials as the converter writes them (specials.json).
    nlohmann::json specials = nlohmann::json::array();
    const auto tc = nlohmann::json::parse(t.files.at("tokenizer_config.json"));
    for (const auto &[id, tok] : tc["added_tokens_decoder"].items())
        specials.push_back({{"id", std::stoi(id)}, {"text", tok["content"]}});
    return Tokenizer::fromData(t.files.at("tiktoken.model"), specials.dump(), -1, t.eosId,
                               Tokenizer::tiktokenSplitPattern(arch));
}
