// Byte-level BPE in the two forms the supported releases ship:
//   - tiktoken: a rank file (`tokenizer.model`, else `tiktoken.model`) whose ranks are the
//     ids, optional `specials.json`; split as the reference engine does
//     (kimi-linear-math.md §4) or, for Kimi K2, by its real pattern (piece_splitter.hpp);
//   - Hugging Face `tokenizer.json` (DeepSeek-V3, Qwen3, gpt-oss): vocabulary, ranked
//     merges, added tokens, NFC normalizer, Split/ByteLevel pre-tokenizers
//     (hf_tokenizer_json.cpp).
// Two encoding modes:
//
//   plain  (markup=false): special markers in the text are ordinary text. Use it for
//          everything a user, a document or a tool wrote, so nobody can forge markup.
//   markup (markup=true):  specials are matched whole, anywhere, earliest first and
//          longest first at equal start. Only for text a chat template produced.
// A tokenizer.json's added tokens that are not special (Qwen's <think>, <tool_call>) are
// vocabulary words: both modes match them, as the Hugging Face library does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waste::text {

class PieceSplitter;

struct SpecialToken {
    int32_t id = 0;
    std::string text; // raw characters from specials.json (JSON escapes are not decoded)
    bool special = true;  // false: a tokenizer.json added token matched in plain text too
    bool lstrip = false;  // tokenizer.json: the token takes the whitespace before it
    bool rstrip = false;  // ... and after it
};

class Tokenizer {
public:
    // Loads <containerDir>/tokenizer.model (or tiktoken.model) and, if present,
    // <containerDir>/specials.json.
    //   bos: -1 for the reference rule, BOS = number of rank lines (the config's
    //        bos_token_id is not read by the reference); >= 0 overrides.
    //   eos: the config's eos_token_id; values <= 0 keep the reference default
    //        (number of rank lines + 2).
    // Throws waste::Error naming the file on a missing or unusable rank file.
    // With a tokenizer.json in the directory, that file (and tokenizer_config.json for BOS
    // and EOS) is the tokenizer instead. `arch` picks the split rules of a rank file
    // (tiktokenSplitPattern).
    static Tokenizer load(const std::string &containerDir, int32_t bos = -1, int32_t eos = -1,
                          std::string_view arch = {});
    // The same from in-memory file contents (tests, converters). `splitPattern` empty: the
    // reference engine's hand-coded split; otherwise tiktoken's rule with that pattern.
    static Tokenizer fromData(std::string_view rankFile, std::string_view specialsJson, int32_t bos = -1,
                              int32_t eos = -1, std::string_view splitPattern = {});
    // A Hugging Face tokenizer.json (and tokenizer_config.json, may be empty). BOS and EOS
    // are the config's bos_token and eos_token (-1 when absent); eos > 0 overrides.
    // Throws waste::Error(Format) naming what the file holds that is not supported.
    static Tokenizer fromHfJson(std::string_view tokenizerJson, std::string_view tokenizerConfigJson,
                                int32_t eos = -1);
    // The split pattern a rank file of this architecture is encoded with: Kimi K2's for
    // "kimi-k2", empty (the reference engine's rule) otherwise.
    static std::string_view tiktokenSplitPattern(std::string_view arch);
    // Whether the directory holds a tokenizer (tokenizer.json, tokenizer.model or tiktoken.model).
    static bool present(const std::string &dir);

    std::vector<int32_t> encode(std::string_view text, bool markup = false) const;
    // Appends to `out` instead of returning a new vector.
    void encodeTo(std::string_view text, bool markup, std::vector<int32_t> &out) const;

    // Concatenates each id's bytes (a special's text for specials; nothing for an
    // unknown id). The result may end inside a UTF-8 sequence.
    std::string decode(std::span<const int32_t> ids) const;
    // The bytes of one id (special text, vocabulary bytes, or empty).
    std::string_view piece(int32_t id) const;
    // What one generated id adds to text a person or a client reads: its bytes, or nothing
    // for a special (markup is structure, never text; the reply parsers read it by id).
    std::string_view textPiece(int32_t id) const { return isSpecial(id) ? std::string_view() : piece(id); }

    // A special token (a tokenizer.json added token marked special, or any specials.json entry).
    bool isSpecial(int32_t id) const;
    // Any added token: a special, or a tokenizer.json added token not marked special (Qwen's
    // <think>). Chat formats use them as markup, so constrained text never contains them.
    bool isAdded(int32_t id) const { return m_specialFlag.count(id) != 0; }
    // Id of a special (or other added token) by its exact text, or -1.
    int32_t specialId(std::string_view text) const;
    const std::vector<SpecialToken> &specials() const { return m_specials; } // longest first

    int32_t bosId() const { return m_bos; }
    int32_t eosId() const { return m_eos; }
    // Number of accepted rank lines (the reference's n_tokens).
    int32_t rankCount() const { return m_rankCount; }
    // One past the largest id that has bytes or is a special (or BOS/EOS).
    int32_t vocabSize() const { return m_vocabSize; }

    // Rank of an exact byte string, or -1.
    int32_t rankOf(std::string_view bytes) const;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    struct Eq {
        using is_transparent = void;
        bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
    };

    void encodeWith(const std::vector<SpecialToken> &added, std::string_view text, std::vector<int32_t> &out) const;
    void encodePlain(std::string_view text, std::vector<int32_t> &out) const;
    void encodePiece(std::string_view piece, std::vector<int32_t> &out) const;
    void bytePairMerge(std::string_view piece, std::vector<int32_t> &out) const;
    void mergeByRules(std::string_view piece, std::vector<int32_t> &out) const;
    void finishSpecials(std::vector<SpecialToken> specials);

    std::unordered_map<std::string, int32_t, Hash, Eq> m_ranks; // bytes -> rank (first line wins)
    std::vector<std::string> m_bytes;                           // rank -> bytes (first line wins)
    std::vector<SpecialToken> m_specials;                       // sorted longest text first
    std::vector<SpecialToken> m_plainAdded;                     // the non-special ones, same order
    std::unordered_map<int32_t, std::string> m_specialText;     // id -> text (first entry wins)
    std::unordered_map<int32_t, bool> m_specialFlag;            // id -> special (first entry wins)
    // Split rules: null for the reference engine's hand-coded ones.
    std::shared_ptr<const PieceSplitter> m_splitter;
    bool m_nfc = false;          // tokenizer.json normalizer NFC
    bool m_windows = true;       // the reference encodes long pieces in 1 KiB windows
    // tokenizer.json merges: (left id << 32 | right id) -> (merge rank, merged id).
    bool m_mergeRules = false;
    bool m_ignoreMerges = false; // a piece that is a whole vocabulary word skips the merges
    std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> m_merges;
    int32_t m_rankCount = 0;
    int32_t m_bos = 0;
    int32_t m_eos = 0;
    int32_t m_vocabSize = 0;
};

} // namespace waste::text
