// StateHistory: what an engine session's state holds, as the tokens that were fed into it,
// so a new prompt can be checked against it and only the part after it fed.
//
// Prompt tokens are compared token for token. Tokens the model generated are compared by
// their text: the app gives a reply back as text and the template renders it as a text
// segment, whose tokenisation may differ from the ids the model sampled ("ab" vs "a","b")
// while being the same words. A reply comes back in one of two spellings: as the model wrote
// it, special tokens included (the chat keeps its raw reply; a template may render them as
// markup or as text), or without them (an API client's content, where markup is never text),
// so a generated chunk matches either: its whole text against every prompt token's bytes, or
// its visible text against the prompt's ordinary tokens. Media tokens are kept unexpanded (one per image), so the
// history is independent of how many positions each image took.
#pragma once

#include <QJsonArray>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

class StateHistory {
public:
    // The bytes of one token (waste::Model::tokenText), and whether it is a special
    // (waste::Model::isSpecialToken).
    struct TokenBytes {
        std::function<std::string(int32_t)> text;
        std::function<bool(int32_t)> special;
    };

    void clear() { m_chunks.clear(); }
    bool empty() const { return m_chunks.empty(); }
    qsizetype tokenCount() const;

    void appendPrompt(std::span<const int32_t> tokens);
    // Generated tokens that were fed, with the text that stands for them: whole (specials
    // included) and visible (without them; empty: the same as the whole).
    void appendGenerated(std::span<const int32_t> tokens, const std::string &text, const std::string &visible = {});

    // How many leading tokens of `prompt` the state holds; -1 when the state is not a prefix
    // of the prompt (then it must be reset and the whole prompt fed).
    qsizetype matchPrefix(std::span<const int32_t> prompt, const TokenBytes &bytes) const;

    // Tokens of a generated chunk at the end (0 when the history ends with prompt tokens).
    qsizetype trailingGenerated() const;
    // The same history without that chunk: what the state held when the answer began.
    StateHistory withoutTrailingGenerated() const;

    // Occurrences of `token` among the prompt tokens (media placeholders already placed).
    qsizetype countPromptToken(int32_t token) const;

    QJsonArray toJson() const;
    static std::optional<StateHistory> fromJson(const QJsonArray &json);
    // Every token read, in order (prompt and generated alike).
    std::vector<int32_t> tokens() const;

private:
    struct Chunk {
        std::vector<int32_t> tokens;
        std::string text;    // generated chunks: the text the tokens stand for, specials included
        std::string visible; // the same without the specials
        bool generated = false;
    };
    std::vector<Chunk> m_chunks;
};
