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

private:
    uint32_t build(const std::vector<int32_t> &sorted, size_t begin, size_t end, size_t depth);

    std::vector<std::string> m_bytes;
    std::vector<Node> m_nodes; // node 0 is the root
    std::vector<uint8_t> m_edgeByte;
    std::vector<uint32_t> m_edgeTarget;
    std::vector<int32_t> m_tokens;
};

} // namespace waste::text
