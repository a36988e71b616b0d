#include "text/token_trie.hpp"

#include "text/tokenizer.hpp"

#include <algorithm>
#include <numeric>

namespace waste::text {

TokenTrie::TokenTrie(std::vector<std::string> tokenBytes) : m_bytes(std::move(tokenBytes))
{
    std::vector<int32_t> ids;
    for (size_t i = 0; i < m_bytes.size(); ++i)
        if (!m_bytes[i].empty())
            ids.push_back(static_cast<int32_t>(i));
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return m_bytes[a] < m_bytes[b]; });
    m_nodes.reserve(ids.size() * 2 + 1);
    build(ids, 0, ids.size(), 0);
}

TokenTrie TokenTrie::fromTokenizer(const Tokenizer &tok)
{
    std::vector<std::string> bytes(static_cast<size_t>(tok.vocabSize()));
    for (int32_t id = 0; id < tok.vocabSize(); ++id)
        if (!tok.isAdded(id))
            bytes[static_cast<size_t>(id)] = std::string(tok.piece(id));
    return TokenTrie(std::move(bytes));
}

// Builds the node for the ids in sorted[begin, end), which all share their first
// `depth` bytes; children are laid out contiguously after the node's edges.
uint32_t TokenTrie::build(const std::vector<int32_t> &sorted, size_t begin, size_t end, size_t depth)
{
    const auto index = static_cast<uint32_t>(m_nodes.size());
    m_nodes.emplace_back();
    size_t i = begin;
    m_nodes[index].tokenBegin = static_cast<uint32_t>(m_tokens.size());
    while (i < end && m_bytes[static_cast<size_t>(sorted[i])].size() == depth)
        m_tokens.push_back(sorted[i++]);
    m_nodes[index].tokenEnd = static_cast<uint32_t>(m_tokens.size());
    // Group the rest by their byte at `depth` (sorted order keeps groups contiguous).
    std::vector<std::pair<size_t, size_t>> groups;
    while (i < end) {
        const char b = m_bytes[static_cast<size_t>(sorted[i])][depth];
        size_t j = i;
        while (j < end && m_bytes[static_cast<size_t>(sorted[j])][depth] == b)
            ++j;
        groups.emplace_back(i, j);
        i = j;
    }
    const auto edgeBegin = static_cast<uint32_t>(m_edgeByte.size());
    m_edgeByte.resize(m_edgeByte.size() + groups.size());
    m_edgeTarget.resize(m_edgeTarget.size() + groups.size());
    m_nodes[index].edgeBegin = edgeBegin;
    m_nodes[index].edgeEnd = edgeBegin + static_cast<uint32_t>(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
        const auto [gb, ge] = groups[g];
        m_edgeByte[edgeBegin + g] = static_cast<uint8_t>(m_bytes[static_cast<size_t>(sorted[gb])][depth]);
        const uint32_t child = build(sorted, gb, ge, depth + 1);
        m_edgeTarget[edgeBegin + g] = child;
    }
    return index;
}

} // namespace waste::text
