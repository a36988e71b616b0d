// PromptFeeder: puts prompts into one waste::Model's session so that what its state already
// holds is not fed again. The EngineWorker (GUI chat and API server) and `waste chat` use it.
//
// Before a generation, prepare() tokenises the prompt and keeps the state when it holds a
// prefix of the prompt (StateHistory), else loads the conversation's saved state when that
// one does (savedstate.h), else goes back to the engine's checkpoint (the start of the last
// answer, for formats that rewrite it; waste::reusePrefix in waste/prefix.hpp), in memory or in the saved
// state, else resets; it adds the images that are not in the state yet.
// After the generation, record() notes what was fed, and save() writes the state to disk:
// only the part the next turn is likely to use, as this turn did (the live state when the
// prompt extended it, the state at the answer's start when the format rewrote the last
// answer), both when there is nothing to go by.
#pragma once

#include "generation/generationtypes.h"
#include "engine/promptcache.h"
#include "engine/savedstate.h"
#include "engine/statehistory.h"

#include <waste/waste.hpp>

#include <QJsonObject>
#include <QStringList>

#include <optional>
#include <vector>

class PromptFeeder {
public:
    // identity: savedstate::modelIdentity of the model (saved states of others are ignored).
    void setModel(waste::Model *model, const QString &identity);
    waste::Model *model() const { return m_model; }

    // ends: where each segment's tokens end, when asked.
    std::vector<int32_t> tokenize(const QList<PromptSegment> &segments, std::vector<size_t> *ends = nullptr) const;

    struct Prepared {
        std::vector<int32_t> prompt; // the whole prompt, images unexpanded
        std::vector<size_t> segmentEnds; // where each segment's tokens end in `prompt`
        qsizetype reused = 0;        // leading tokens already in the state: feed the rest
        bool restored = false;       // the state was loaded from `stateFile`
        int positionBefore = 0;      // the engine position before the rest is fed
        std::span<const int32_t> rest() const { return std::span<const int32_t>(prompt).subspan(size_t(reused)); }
    };
    // reuse false: always start from a clean state. stateFile: the conversation's saved
    // state (may be empty). `images` are all the prompt's images, in order; those the kept
    // state does not hold are encoded now (placeImages), unless `place` is false.
    Prepared prepare(const QList<PromptSegment> &segments, const QStringList &images, bool reuse,
                     const QString &stateFile, bool place = true);
    // Encodes the images of `images` (all the prompt's, in order) that the state does not
    // hold, for the next generate(p.rest()), dropping any encoded before. They wait through
    // a text-only feedPrefix. Returns the positions they add beyond their placeholders.
    qsizetype placeImages(Prepared &p, const QStringList &images);
    // After prepare(): when the prompt cache keeps a longer prefix of the prompt than the
    // state does, the state is loaded from it and only the rest is left to feed (p.reused
    // grows, p.restored is set). An entry that does not load is dropped. Entries hold text
    // only (the system prompt and tools before a conversation's first image): call it
    // before placeImages, since the loaded state may hold fewer images than the one
    // prepare() kept.
    void useCache(Prepared &p, PromptCache &cache);
    // Reads the prompt up to `end` now (eval, in passes; `progress` as generate's), so the
    // state holds exactly its first `end` tokens and p.reused moves there. The part must
    // hold no image (images placed before it wait for the rest).
    void feedPrefix(Prepared &p, qsizetype end, const waste::PrefillCallback &progress);
    // Keeps the session's state, which holds exactly `prefix`, as a prompt cache entry (once
    // per prefix). A failed write is a warning, never the request's failure.
    void saveToCache(std::span<const int32_t> prefix, PromptCache &cache) const;
    // Where the prefix the prompt cache should keep on the way ends: the end of the prompt's
    // first `reusableSegments` segments (the system prompt, tools, earlier turns), or of the
    // last of them before the first image (an entry holds text only), when that is past what
    // the state already holds, short of the whole prompt, long enough and not kept yet.
    // 0 when there is none.
    qsizetype cacheMark(const Prepared &p, int reusableSegments, PromptCache &cache) const;
    QString identity() const { return m_identity; }

    // After model()->generate(prepared.rest(), ...) returned `result`.
    void record(const Prepared &prepared, const waste::GenResult &result);
    // The state is undefined (an error mid-layer): start clean next time.
    void reset();

    const StateHistory &history() const { return m_history; }

    // Writes the state and what it holds (extra: anything the caller keeps with it).
    void save(const QString &stateFile, const QJsonObject &extra = {}) const;
    // Loads a state saved by save() for this model; returns its extra, or nothing (the
    // state is then unchanged) when there is none or it is of another model.
    std::optional<QJsonObject> restore(const QString &stateFile);

    // How the last prepare() kept a prefix: it decides what save() writes.
    enum class Kept { Nothing, LiveState, Checkpoint };
    Kept lastKept() const { return m_kept; }

private:
    qsizetype keptPrefix(const std::vector<int32_t> &prompt, const QStringList &images, const QString &stateFile,
                         bool &restored);
    // Loads a saved state and its history; false (the caller resets) when it cannot be used.
    bool load(const QString &stateFile, savedstate::Record &saved);
    // Puts the session at the longest prefix of `prompt` the engine or its checkpoints hold.
    qsizetype fromCheckpoint(const std::vector<int32_t> &prompt);

    waste::Model *m_model = nullptr;
    QString m_identity;
    int32_t m_mediaToken = -1; // <|media_pad|>: one per image in an unexpanded prompt
    StateHistory m_history;
    Kept m_kept = Kept::Nothing;
};
