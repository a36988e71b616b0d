#include "text/framed_json_constraint.hpp"

#include <algorithm>
#include <limits>

namespace waste::text {

FramedJsonConstraint::FramedJsonConstraint(std::shared_ptr<const TokenTrie> trie, std::vector<Branch> branches,
                                           bool freeText, int maxTokens, int32_t eos)
    : m_trie(std::move(trie)), m_branches(std::move(branches)), m_maxTokens(maxTokens), m_eos(eos),
      m_phase(freeText ? Phase::Free : Phase::Prefix)
{
    if (m_branches.empty())
        throw Error(ErrorCode::Argument, "constrained decoding: no branch to follow");
    int64_t longest = 0;
    for (size_t i = 0; i < m_branches.size(); ++i) {
        const Branch &b = m_branches[i];
        if (b.suffix.empty() || !b.schema)
            throw Error(ErrorCode::Argument, "constrained decoding: a branch needs a schema and a suffix");
        if (freeText && (b.prefix.empty() || b.prefix[0] != m_branches[0].prefix[0]))
            throw Error(ErrorCode::Argument, "constrained decoding: free text needs one common first token");
        const JsonRecognizer rec(b.schema);
        // The document written one byte-token at a time (every byte is a token).
        const int64_t minimum = int64_t(b.prefix.size()) + rec.minRemaining(rec.initial()) + int64_t(b.suffix.size());
        longest = std::max(longest, minimum);
        m_live.push_back(i);
    }
    if (maxTokens > 0 && longest > maxTokens)
        throw Error(ErrorCode::Argument, "max_tokens " + std::to_string(maxTokens) +
                                             " is too small for the required output structure: it needs at least " +
                                             std::to_string(longest) + " tokens",
                    "max_tokens");
    m_freeCap = !freeText ? 0
                : maxTokens > 0 ? static_cast<int>((maxTokens - longest) / 2)
                                : std::numeric_limits<int>::max();
    enterJsonIfReady();
}

void FramedJsonConstraint::allow(std::vector<bool> &mask, int32_t id)
{
    if (id < 0)
        return;
    if (static_cast<size_t>(id) >= mask.size())
        mask.resize(static_cast<size_t>(id) + 1, false);
    mask[static_cast<size_t>(id)] = true;
}

void FramedJsonConstraint::refuse(int32_t token)
{
    throw Error(ErrorCode::Argument,
                "constrained decoding: token " + std::to_string(token) + " does not continue the required structure");
}

void FramedJsonConstraint::enterJsonIfReady()
{
    if (m_phase != Phase::Prefix)
        return;
    for (size_t i : m_live) {
        const Branch &b = m_branches[i];
        if (m_pos < b.prefix.size())
            continue;
        m_branch = i;
        m_phase = Phase::Json;
        // The document's own budget: what is left once the suffix after its end token is kept.
        int budget = 0;
        if (m_maxTokens > 0)
            budget = std::max(1, m_maxTokens - m_used - static_cast<int>(b.suffix.size() - 1));
        m_json = std::make_unique<JsonConstraint>(m_trie, b.suffix[0], b.schema, budget);
        return;
    }
}

void FramedJsonConstraint::allowed(std::vector<bool> &mask)
{
    std::fill(mask.begin(), mask.end(), false);
    switch (m_phase) {
    case Phase::Free:
        if (m_used < m_freeCap) {
            if (mask.size() < m_trie->vocabSize())
                mask.resize(m_trie->vocabSize(), false);
            for (size_t id = 0; id < m_trie->vocabSize(); ++id)
                if (!m_trie->bytes(static_cast<int32_t>(id)).empty())
                    mask[id] = true;
        }
        allow(mask, m_branches[0].prefix[0]);
        break;
    case Phase::Prefix:
        for (size_t i : m_live)
            allow(mask, m_branches[i].prefix[m_pos]);
        break;
    case Phase::Json:
        m_json->allowed(mask);
        break;
    case Phase::Suffix:
        allow(mask, m_branches[m_branch].suffix[m_pos]);
        break;
    case Phase::Done:
        allow(mask, m_eos);
        break;
    }
}

void FramedJsonConstraint::accept(int32_t token)
{
    ++m_used;
    switch (m_phase) {
    case Phase::Free:
        if (token == m_branches[0].prefix[0]) {
            m_phase = Phase::Prefix;
            m_pos = 1;
            enterJsonIfReady();
        } else if (token < 0 || static_cast<size_t>(token) >= m_trie->vocabSize() || m_trie->bytes(token).empty()) {
            refuse(token);
        }
        break;
    case Phase::Prefix: {
        std::vector<size_t> still;
        for (size_t i : m_live)
            if (m_branches[i].prefix[m_pos] == token)
                still.push_back(i);
        if (still.empty())
            refuse(token);
        m_live = std::move(still);
        ++m_pos;
        enterJsonIfReady();
        break;
    }
    case Phase::Json: {
        const Branch &b = m_branches[m_branch];
        m_json->accept(token);
        if (token == b.suffix[0]) {
            m_phase = b.suffix.size() == 1 ? Phase::Done : Phase::Suffix;
            m_pos = 1;
        }
        break;
    }
    case Phase::Suffix: {
        const Branch &b = m_branches[m_branch];
        if (token != b.suffix[m_pos])
            refuse(token);
        if (++m_pos == b.suffix.size())
            m_phase = Phase::Done;
        break;
    }
    case Phase::Done:
        break;
    }
}

} // namespace waste::text
