// Pre-tokenization by patterns: the `pre_tokenizer` of a Hugging Face tokenizer.json
// (a Sequence of Split and ByteLevel steps) or a tiktoken pat_str (its matches are the
// pieces; text between matches is dropped, as tiktoken does).
#pragma once

#include "text/split_regex.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

// What a Split step does with the text its pattern matches (Hugging Face's
// SplitDelimiterBehavior); with `invert` the pattern matches what is kept and the text
// between matches is the delimiter.
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

class PieceSplitter {
public:
    void addSplit(std::string_view pattern, SplitBehavior behavior, bool invert);
    // ByteLevel's own step: a space before each piece that lacks one (add_prefix_space),
    // then GPT-2's pattern, isolated (use_regex).
    void addByteLevel(bool addPrefixSpace, bool useRegex);

    // The pieces of `text`, in order (never empty strings).
    std::vector<std::string> split(std::string_view text) const;

private:
    struct Step {
        std::unique_ptr<SplitRegex> regex; // null: the prefix-space step
        SplitBehavior behavior = SplitBehavior::Isolated;
        bool invert = false;
    };
    std::vector<Step> m_steps;
};

// tiktoken's split pattern of Kimi K2's tiktoken.model (tokenization_kimi.py in the release).
extern const char *const kKimiK2SplitPattern;

} // namespace waste::text
