// Constrained decoding of a tool call's arguments where a chat format writes each argument
// as its own element instead of one JSON object: GLM's <arg_key>/<arg_value> pairs,
// Qwen3.5's <parameter=KEY> blocks, DeepSeek's DSML parameters. Each element is fixed
// tokens that name the key (`head`), the value, then fixed tokens (`tail`):
//   - a string-typed argument is written raw, its characters as they are (the parsers keep
//     them as the string); it still follows the property's schema (enum, lengths, pattern):
//     each character is checked as the JSON string it stands for;
//   - any other argument is the JSON text of a value matching its property's schema; a
//     scalar may end wherever it is complete, the tail's first token then follows.
// No value may contain `stop` (the text at which the format's parser ends a value). The
// required arguments come first, in the order the schema lists them, then any of the
// optional ones, in that order; `close` ends the call.
//
// Inside, the list is a small program run as a set of threads (one per way the tokens so far
// can be read), so a token that could end a number or continue it keeps both readings.
// With a token budget, a token is allowed only if the shortest way to finish after it,
// one byte-token at a time, still fits.
#pragma once

#include "text/json_recognizer.hpp"
#include "text/token_trie.hpp"
#include "waste/waste.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace waste::text {

struct ArgumentList {
    struct Element {
        std::vector<int32_t> head;            // tokens before the value (they name the key)
        std::shared_ptr<const Schema> schema; // the property's
        bool raw = false;                     // a string written as its characters
        std::vector<int32_t> tail;            // tokens after the value; not empty
        bool required = false;
    };
    std::vector<Element> elements;   // required ones first
    std::vector<int32_t> separator;  // tokens between two arguments (may be empty)
    std::vector<int32_t> close;      // tokens after the last argument; not empty
    std::string stop;                // text no value may contain (may be empty)
};

class ArgumentListConstraint : public TokenConstraint {
public:
    // maxTokens: tokens the list may use, close included (<= 0: no limit). Throws
    // Error(Argument) for a list that cannot be followed.
    ArgumentListConstraint(std::shared_ptr<const TokenTrie> trie, std::shared_ptr<const ArgumentList> list,
                           int maxTokens);
    ~ArgumentListConstraint() override;

    void allowed(std::vector<bool> &mask) override;
    void accept(int32_t token) override;
    bool complete() const override { return m_done; }

    // The fewest tokens that write `list` (each value's shortest form, one byte a token).
    static int64_t minimumTokens(const ArgumentList &list);

private:
    struct Program;
    struct Thread;
    void settle(std::vector<Thread> &threads) const;

    std::shared_ptr<const TokenTrie> m_trie;
    std::shared_ptr<const ArgumentList> m_list;
    std::unique_ptr<Program> m_program;
    int m_maxTokens;
    int m_used = 0;
    bool m_done = false;
    std::vector<Thread> m_threads;
};

} // namespace waste::text
