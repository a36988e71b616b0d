// Constrained decoding of output that has fixed structure around a JSON document, such as
// a K3 message: optional free text (the think channel), then one of several branches,
// each `prefix` tokens, a JSON document matching the branch's schema, and `suffix`
// tokens. suffix[0] is the token that ends the document (K3: <|close|>). Several branches
// are how a forced tool call chooses its function: they differ in their prefixes (the
// call header names the tool), and the prefix tokens read so far decide which is live.
//
// Token budget: with maxTokens > 0 the whole output fits it. The free text may use at
// most half of what the longest branch's minimum leaves spare; the document gets the
// rest, so it can always close (JsonConstraint's guarantee) and the suffix follows.
#pragma once

#include "text/json_constraint.hpp"

#include <memory>
#include <vector>

namespace waste::text {

class FramedJsonConstraint : public TokenConstraint {
public:
    struct Branch {
        std::vector<int32_t> prefix;
        std::shared_ptr<const Schema> schema;
        std::vector<int32_t> suffix; // not empty: suffix[0] ends the document
    };

    // freeText: before the branches any ordinary token (one with bytes in `trie`) may
    // come; the branches' common first prefix token ends it. Throws Error(Argument) when
    // maxTokens cannot hold the shortest output, naming the minimum.
    FramedJsonConstraint(std::shared_ptr<const TokenTrie> trie, std::vector<Branch> branches, bool freeText,
                         int maxTokens, int32_t eos);

    void allowed(std::vector<bool> &mask) override;
    void accept(int32_t token) override;
    bool complete() const override { return m_phase == Phase::Done; }

    int freeTextCap() const { return m_freeCap; }

private:
    enum class Phase { Free, Prefix, Json, Suffix, Done };
    void enterJsonIfReady();
    static void allow(std::vector<bool> &mask, int32_t id);
    [[noreturn]] static void refuse(int32_t token);

    std::shared_ptr<const TokenTrie> m_trie;
    std::vector<Branch> m_branches;
    int m_maxTokens;
    int32_t m_eos;
    Phase m_phase;
    int m_used = 0;    // tokens accepted
    int m_freeCap = 0; // free-text tokens allowed
    std::vector<size_t> m_live; // branches whose prefix matches so far
    size_t m_pos = 0;           // position in the prefix or suffix
    size_t m_branch = 0;        // the chosen branch (Json, Suffix)
    std::unique_ptr<JsonConstraint> m_json;
};

} // namespace waste::text
