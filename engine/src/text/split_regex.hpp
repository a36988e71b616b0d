// The regular expressions that tokenizers split text with (the `Split` pre-tokenizers of
// Hugging Face tokenizer.json files and tiktoken `pat_str` patterns), matched the way
// Oniguruma and fancy-regex match them: leftmost, first alternative first, backtracking.
//
// Supported: alternation, (?:...) and (...) groups (captures are not kept), (?i:...)
// (ASCII case folding only: the contractions the patterns spell), (?=...) (?!...),
// quantifiers ? * + {n} {n,} {n,m} (lazy `?` and possessive `+` suffixes), classes with
// ranges, negation, nested classes and && intersection, \p{..}/\P{..} for general
// categories and their groups (L, Lu, M, N, P, S, Z, C, ...) and Han, \s \S \d \D \w \W,
// `.`, escapes \t \n \r \f \v \xHH \x{H..} \uHHHH. Anything else is refused with the
// construct named, rather than matched differently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

class SplitRegex {
public:
    // Throws waste::Error(Format) naming the pattern and the unsupported construct.
    explicit SplitRegex(std::string_view pattern);
    ~SplitRegex();
    SplitRegex(SplitRegex &&) noexcept;
    SplitRegex &operator=(SplitRegex &&) noexcept;

    struct Match {
        size_t begin, end; // code point indices
    };
    // Non-overlapping matches over code points (see unicode_props.hpp decodeUtf8), left to right.
    std::vector<Match> findAll(const std::vector<uint32_t> &cps) const;

    struct Node;

private:
    std::unique_ptr<Node> m_root;
};

} // namespace waste::text
