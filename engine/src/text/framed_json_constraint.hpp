// Constrained decoding of a reply that has fixed structure around one JSON document: a
// chat format's native layout of a JSON answer or of a tool call (text/reply_frame.hpp
// says what each format's layout is). In order:
//   - reasoning (optional): `open` tokens, free text, `close` tokens. close[0] is a
//     markup token (never ordinary text), so the free text ends exactly when it comes;
//   - one of several branches: `prefix` tokens, a JSON document matching the branch's
//     schema (or, for formats that write a call's arguments one element each, its
//     `arguments`: text/argument_list_constraint.hpp), `suffix` tokens. Branches are how a forced call chooses its function: their
//     prefixes differ (the call header names the tool) and the tokens read so far decide
//     which stay live.
// The document ends in one of two ways, chosen by suffix[0]:
//   - a markup token (K3's <|close|>, DeepSeek's end of sentence): the token ends it;
//   - ordinary text (Qwen3's "}\n</tool_call>", DeepSeek's "\n```"): the document ends
//     where its top-level value closes, so the schema must be an object or array (a
//     number could always go on); the suffix is then written as it stands.
//
// Token budget: with maxTokens > 0 the whole output fits it. The free text may use at
// most half of what the structure's minimum leaves spare; the document gets the rest, so
// it can always close (JsonConstraint's guarantee) and the suffix follows.
#pragma once

#include "text/argument_list_constraint.hpp"
#include "text/json_constraint.hpp"

#include <memory>
#include <vector>

namespace waste::text {

class FramedJsonConstraint : public TokenConstraint {
public:
    struct Branch {
        std::vector<int32_t> prefix;
        std::shared_ptr<const Schema> schema; // the document's (or null, with `arguments`)
        std::vector<int32_t> suffix;          // not empty
        std::shared_ptr<const ArgumentList> arguments = {}; // a call's arguments written one by one
    };
    struct Reasoning {
        bool allowed = false;        // free reasoning text comes before the branches
        bool optional = false;       // ... or the model may start a branch at once (needs `open`)
        std::vector<int32_t> open;   // tokens that open it; empty: the prompt already did
        std::vector<int32_t> close;  // tokens that close it (not empty when allowed)
    };

    // Ordinary tokens are those with bytes in `trie`. Throws Error(Argument) for a frame
    // that cannot be followed (naming what is wrong), and when maxTokens cannot hold the
    // shortest output, naming the minimum.
    FramedJsonConstraint(std::shared_ptr<const TokenTrie> trie, Reasoning reasoning, std::vector<Branch> branches,
                         int maxTokens, int32_t eos);

    void allowed(std::vector<bool> &mask) override;
    void accept(int32_t token) override;
    bool complete() const override { return m_phase == Phase::Done; }

    int freeTextCap() const { return m_freeCap; }

private:
    enum class Phase { Open, Free, Close, Prefix, Json, Suffix, Done };
    bool ordinary(int32_t token) const;
    void startBranches();
    void enterJsonIfReady();
    static void allow(std::vector<bool> &mask, int32_t id);
    [[noreturn]] static void refuse(int32_t token);

    std::shared_ptr<const TokenTrie> m_trie;
    Reasoning m_reasoning;
    std::vector<Branch> m_branches;
    int m_maxTokens;
    int32_t m_eos;
    Phase m_phase = Phase::Prefix;
    bool m_mayOpen = false;   // optional reasoning: the first token may still open it
    int m_used = 0;           // tokens accepted
    int m_free = 0;           // free-text tokens accepted
    int m_freeCap = 0;        // free-text tokens allowed
    std::vector<size_t> m_live; // branches whose prefix matches so far
    size_t m_pos = 0;           // position in open, close, prefix or suffix
    size_t m_branch = 0;        // the chosen branch (Json, Suffix)
    bool m_textEnd = false;     // the chosen branch's document ends where its value closes
    std::unique_ptr<JsonConstraint> m_json;
    std::unique_ptr<ArgumentListConstraint> m_arguments;
};

} // namespace waste::text
