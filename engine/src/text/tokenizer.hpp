// tiktoken-style byte-level BPE, as the reference engine reads and applies it
// (kimi-linear-math.md §4): a rank file (`tokenizer.model`, else `tiktoken.model`)
// whose ranks are the ids, optional `specials.json`, two encoding modes.
//
//   plain  (markup=false): special markers in the text are ordinary text. Use it for
//          everything a user, a document or a tool wrote, so nobody can forge markup.
//   markup (markup=true):  specials are matched whole, anywhere, earliest first and
//          longest first at equal start. Only for text a chat template produced.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waste::text {

struct SpecialToken {
    int32_t id = 0;
    std::string text; // raw characters from specials.json (JSON escapes are not decoded)
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
    static Tokenizer load(const std::string &containerDir, int32_t bos = -1, int32_t eos = -1);
    // The same from in-memory file contents (tests, converters).
    static Tokenizer fromData(std::string_view rankFile, std::string_view specialsJson, int32_t bos = -1,
                              int32_t eos = -1);

    std::vector<int32_t> encode(std::string_view text, bool markup = false) const;
    // Appends to `out` instead of returning a new vector.
    void encodeTo(std::string_view text, bool markup, std::vector<int32_t> &out) const;

    // Concatenates each id's bytes (a special's text for specials; nothing for an
    // unknown id). The result may end inside a UTF-8 sequence.
    std::string decode(std::span<const int32_t> ids) const;
    // The bytes of one id (special text, vocabulary bytes, or empty).
    std::string_view piece(int32_t id) const;

    bool isSpecial(int32_t id) const;
    // Id of a special by its exact text, or -1.
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

    void encodePlain(std::string_view text, std::vector<int32_t> &out) const;
    void encodePiece(std::string_view piece, std::vector<int32_t> &out) const;
    void bytePairMerge(std::string_view piece, std::vector<int32_t> &out) const;

    std::unordered_map<std::string, int32_t, Hash, Eq> m_ranks; // bytes -> rank (first line wins)
    std::vector<std::string> m_bytes;                           // rank -> bytes (first line wins)
    std::vector<SpecialToken> m_specials;                       // sorted longest text first
    std::unordered_map<int32_t, std::string> m_specialText;     // id -> text (first entry wins)
    int32_t m_rankCount = 0;
    int32_t m_bos = 0;
    int32_t m_eos = 0;
    int32_t m_vocabSize = 0;
};

} // namespace waste::text
