#include "text/json_constraint.hpp"

#include "text/token_budget.hpp"

#include <algorithm>

namespace waste::text {

JsonConstraint::JsonConstraint(std::shared_ptr<const TokenTrie> trie, int32_t eos,
                               std::shared_ptr<const Schema> schema, int maxTokens)
    : m_trie(std::move(trie)), m_eos(eos), m_rec(std::move(schema)), m_state(m_rec.initial()),
      m_maxTokens(maxTokens)
{
}

bool JsonConstraint::complete() const { return m_rec.canEnd(m_state); }

void JsonConstraint::allowed(std::vector<bool> &mask)
{
    std::fill(mask.begin(), mask.end(), false);
    if (mask.size() < m_trie->vocabSize())
        mask.resize(m_trie->vocabSize(), false);
    const bool canEnd = m_rec.canEnd(m_state) && m_eos >= 0;
    if (canEnd) {
        if (static_cast<size_t>(m_eos) >= mask.size())
            mask.resize(static_cast<size_t>(m_eos) + 1, false);
        mask[static_cast<size_t>(m_eos)] = true;
    }

    // Every token whose bytes continue the document, with the shortest completion after it.
    m_candidates.clear();
    if (m_levels.empty()) // m_levels[d]: the state after d bytes
        m_levels.resize(1);
    m_levels[0] = m_state;
    m_trie->walk([&](size_t depth, uint8_t byte, uint32_t child) {
        if (m_levels.size() <= depth)
            m_levels.resize(depth + 1);
        m_levels[depth] = m_levels[depth - 1];
        if (!m_rec.feed(m_levels[depth], byte))
            return false;
        const TokenTrie::Node &cn = m_trie->nodes()[child];
        if (cn.tokenBegin != cn.tokenEnd)
            m_candidates.push_back({child, m_maxTokens > 0 ? m_rec.minRemaining(m_levels[depth]) : 0});
        return true;
    });

    // Tokens left after this one must hold the shortest completion and EOS. If the
    // limit was too small from the start, take the tokens that progress the most.
    const int64_t limit = affordableCost(m_candidates,
                                         m_maxTokens > 0 ? int64_t(m_maxTokens) - m_accepted - 2 : kInfiniteLen,
                                         canEnd, [](const Candidate &c) { return c.cost; });
    for (const Candidate &c : m_candidates)
        if (c.cost <= limit)
            m_trie->markTokens(c.node, mask);
    if (!canEnd && m_candidates.empty() && m_eos >= 0 && static_cast<size_t>(m_eos) < mask.size())
        mask[static_cast<size_t>(m_eos)] = true; // nothing can continue: let generation end
}

void JsonConstraint::accept(int32_t token)
{
    ++m_accepted;
    if (token == m_eos)
        return;
    if (token < 0 || static_cast<size_t>(token) >= m_trie->vocabSize() || m_trie->bytes(token).empty())
        throw Error(ErrorCode::Argument, "constrained decoding: token " + std::to_string(token) +
                                             " is not an ordinary vocabulary token");
    JsonRecognizer::State next = m_state;
    for (char c : m_trie->bytes(token))
        if (!m_rec.feed(next, static_cast<uint8_t>(c)))
            throw Error(ErrorCode::Argument, "constrained decoding: token " + std::to_string(token) +
                                                 " cannot continue the JSON document");
    m_state = std::move(next);
    m_text += m_trie->bytes(token);
}

} // namespace waste::text
