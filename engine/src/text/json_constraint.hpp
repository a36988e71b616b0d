// Constrained decoding: a waste::TokenConstraint that only lets through tokens whose
// bytes continue a JSON document matching a schema, and EOS once the document is
// complete. With a token budget it also guarantees the document can still be
// closed in time: a token is allowed only if the shortest completion after it,
// written one byte-token at a time, plus EOS still fits in the tokens left.
#pragma once

#include "text/json_recognizer.hpp"
#include "text/token_trie.hpp"
#include "waste/waste.hpp"

#include <memory>

namespace waste::text {

class JsonConstraint : public TokenConstraint {
public:
    // maxTokens: the generation's token limit, EOS included (<= 0: no limit).
    JsonConstraint(std::shared_ptr<const TokenTrie> trie, int32_t eos, std::shared_ptr<const Schema> schema,
                   int maxTokens);

    void allowed(std::vector<bool> &mask) override;
    void accept(int32_t token) override;
    bool complete() const override;
    // The top-level value has closed: nothing but the end can follow.
    bool closed() const { return m_rec.closed(m_state); }

    int accepted() const { return m_accepted; }
    const std::string &text() const { return m_text; } // bytes accepted so far

private:
    struct Candidate {
        uint32_t node;  // trie node whose tokens end here
        int64_t cost;   // shortest completion after them
    };

    std::shared_ptr<const TokenTrie> m_trie;
    int32_t m_eos;
    JsonRecognizer m_rec;
    JsonRecognizer::State m_state;
    int m_maxTokens;
    int m_accepted = 0;
    std::string m_text;
    std::vector<JsonRecognizer::State> m_levels; // scratch: one state per trie depth
    std::vector<Candidate> m_candidates;         // scratch
};

} // namespace waste::text
