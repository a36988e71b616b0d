// The prompt cache on disk: the engine state at the end of a prefix that later prompts are
// likely to start with (a system prompt and its tools, a conversation so far), kept across
// conversations, API requests and restarts. A new prompt that starts with a kept prefix loads
// its state and reads only the rest: a second chat with the same system prompt and tools reads
// none of them again, and the API reports those tokens as cached.
//
// An entry is a saved state (savedstate.h: PATH and PATH.json, the record written last), named
// by a hash of the model's identity and the prefix's tokens, so a state is never overwritten:
// a write cut short by a crash leaves a state without a record, which is never used and is
// removed at the next scan. Entries of other models are ignored. The cache holds at most
// maxBytes of states; the least recently used go first. Every state is the engine's whole
// session state, so recurrent layers (KDA, Gated DeltaNet) are kept exactly as attention is.
//
// Used on the engine thread only (EngineWorker, through PromptFeeder).
#pragma once

#include "engine/statehistory.h"

#include <QString>

#include <cstdint>
#include <span>
#include <vector>

class PromptCache {
public:
    // dir: where entries live (made when needed); maxBytes 0: the cache is off.
    void configure(const QString &dir, qint64 maxBytes);
    bool enabled() const { return m_maxBytes > 0 && !m_dir.isEmpty(); }
    QString dir() const { return m_dir; }
    qint64 maxBytes() const { return m_maxBytes; }

    // Prefixes shorter than this are not worth a file (default 64 tokens).
    void setMinTokens(int n) { m_minTokens = n; }
    int minTokens() const { return m_minTokens; }

    // The entry file for this model's prefix (whether or not it exists).
    QString pathFor(const QString &identity, std::span<const int32_t> prefix) const;

    struct Hit {
        QString path;     // the state to load (savedstate::readRecord / PromptFeeder::restore)
        qsizetype tokens = 0;
    };
    // The longest kept prefix of `prompt` for this model that is longer than `atLeast` and
    // shorter than the prompt (the last token is read to give logits); tokens compared one by
    // one against the entry's record. path empty: none.
    Hit longest(const QString &identity, std::span<const int32_t> prompt, qsizetype atLeast);

    bool contains(const QString &identity, std::span<const int32_t> prefix);
    // After an entry was written at `path`: counts it, marks it used, and removes the least
    // recently used entries while the cache holds more than maxBytes.
    void added(const QString &path);
    // An entry that could not be loaded: gone.
    void drop(const QString &path);

    // What the cache holds now (for the Settings page and tests).
    qint64 bytes() const;
    int entries() const;

private:
    struct Entry {
        QString path;
        QString identity;
        std::vector<int32_t> tokens; // the prefix, one per position
        qint64 bytes = 0;
    };
    void scan(); // reads the folder once; drops half-written entries
    void touch(const QString &path) const;
    void evict();

    QString m_dir;
    qint64 m_maxBytes = 0;
    int m_minTokens = 64;
    bool m_scanned = false;
    std::vector<Entry> m_entries;
};
