// The vocabulary as a byte trie, so a token mask can test all tokens that share a
// prefix by feeding that prefix once. Built once per vocabulary and shared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste::text {

class Tokenizer;

class TokenTrie {
public:
    // tokenBytes[id] = the bytes of token id; an empty entry is never offered.
    explicit TokenTrie(std::vector<std::string> tokenBytes);
    // Every ordinary token of `tok`: added tokens (specials, and words such as Qwen's
    // <think>) are markup, not text, whatever their ids (DeepSeek's BOS is 0; Qwen3 has none).
    static TokenTrie fromTokenizer(const Tokenizer &tok);

    struct Node {
        uint32_t edgeBegin = 0, edgeEnd = 0;   // children: edges [begin, end)
        uint32_t tokenBegin = 0, tokenEnd = 0; // ids whose bytes end here
    };

    const std::vector<Node> &nodes() const { return m_nodes; }
    uint8_t edgeByte(uint32_t e) const { return m_edgeByte[e]; }
    uint32_t edgeTarget(uint32_t e) const { return m_edgeTarget[e]; }
    int32_t tokenAt(uint32_t i) const { return m_tokens[i]; }
    const std::string &bytes(int32_t id) const { return m_bytes[static_cast<size_t>(id)]; }
    size_t vocabSize() const { return m_bytes.size(); }
    // Depth-first over the trie: visit(depth, byte, child) for each edge below a node entered
    // (depth: the child's, 1 under the root); it returns whether to enter the child.
    template <class Visit>
    void walk(Visit visit) const
    {
        struct Pos {
            uint32_t node, edge;
        };
        std::vector<Pos> path{{0, m_nodes[0].edgeBegin}};
        while (!path.empty()) {
            Pos &top = path.back();
            if (top.edge == m_nodes[top.node].edgeEnd) {
                path.pop_back();
                continue;
            }
            const uint32_t e = top.edge++;
            const uint32_t child = m_edgeTarget[e];
            if (visit(path.size(), m_edgeByte[e], child) && m_nodes[child].edgeBegin != m_nodes[child].edgeEnd)
                path.push_back({child, m_nodes[child].edgeBegin});
        }
    }
    // Marks in `mask` every token whose bytes end at `node` (ids past its size are skipped).
    void markTokens(uint32_t node, std::vector<bool> &mask) const
    {
        for (uint32_t t = m_nodes[node].tokenBegin; t < m_nodes[node].tokenEnd; ++t)
            if (const auto id = static_cast<size_t>(m_tokens[t]); id < mask.size())
                mask[id] = true;
    }

private:
    uint32_t build(const std::vector<int32_t> &sorted, size_t begin, size_t end, size_t depth);

    std::vector<std::string> m_bytes;
    std::vector<Node> m_nodes; // node 0 is the root
    std::vector<uint8_t> m_edgeByte;
    std::vector<uint32_t> m_edgeTarget;
    std::vector<int32_t> m_tokens;
};

} // namespace waste::text
