#include "engine/promptfeeder.h"

#include <waste/chat.hpp>
#include <waste/prefix.hpp>

#include <algorithm>

void PromptFeeder::setModel(waste::Model *model, const QString &identity)
{
    m_model = model;
    m_identity = identity;
    m_history.clear();
    m_mediaToken = -1;
    if (m_model && m_model->info().hasVision) {
        const std::vector<int32_t> pad = m_model->tokenize("<|media_pad|>", true);
        m_mediaToken = pad.size() == 1 ? pad.front() : -1;
    }
}

std::vector<int32_t> PromptFeeder::tokenize(const QList<PromptSegment> &segments, std::vector<size_t> *ends) const
{
    // One segment at a time, never joined: BPE is not associative, and text must not merge
    // with markup.
    std::vector<int32_t> ids;
    for (const PromptSegment &s : segments) {
        const std::vector<int32_t> part = m_model->tokenize(s.text.toStdString(), s.markup);
        ids.insert(ids.end(), part.begin(), part.end());
        if (ends)
            ends->push_back(ids.size());
    }
    return ids;
}

qsizetype PromptFeeder::keptPrefix(const std::vector<int32_t> &prompt, const QStringList &images,
                                   const QString &stateFile, bool &restored)
{
    const StateHistory::TokenBytes bytes{[this](int32_t t) { return m_model->tokenText(t); },
                                         [this](int32_t t) { return m_model->isSpecialToken(t); }};
    // A prefix to keep must leave at least one token to feed (the logits come from it), and
    // must not hold more images than the prompt has.
    const auto usable = [&](const StateHistory &h, qsizetype k) {
        return k > 0 && size_t(k) < prompt.size() && h.countPromptToken(m_mediaToken) <= images.size()
               && (images.isEmpty() || m_mediaToken >= 0);
    };
    if (!m_history.empty()) {
        const qsizetype k = m_history.matchPrefix(prompt, bytes);
        if (usable(m_history, k)) {
            m_kept = Kept::LiveState;
            return k;
        }
    }
    // The prompt does not extend all the state read (the format rewrote the last answer,
    // or the conversation changed): the engine can still go back to the longest prefix
    // that it, or a checkpoint of it, holds token for token.
    const int live = waste::reusablePrefix(*m_model, prompt);
    std::optional<savedstate::Record> saved =
        stateFile.isEmpty() ? std::nullopt : savedstate::readRecord(stateFile, m_identity);
    if (saved) {
        const qsizetype k = saved->history.matchPrefix(prompt, bytes);
        if (usable(saved->history, k) && k > live) {
            if (!load(stateFile, *saved))
                return 0; // the caller resets
            restored = true;
            m_kept = Kept::LiveState;
            return k;
        }
    }
    if (live > 0)
        return fromCheckpoint(prompt);
    // The saved state's checkpoint (a reopened chat whose last answer the format rewrites).
    if (!saved || !load(stateFile, *saved))
        return 0;
    restored = true;
    return fromCheckpoint(prompt);
}

bool PromptFeeder::load(const QString &stateFile, savedstate::Record &saved)
{
    try {
        m_model->loadState(stateFile.toStdString());
    } catch (const waste::Error &) {
        // Damaged, or of other shapes: of no use again. The state in memory is unchanged.
        savedstate::remove(stateFile);
        return false;
    }
    if (m_model->position() != saved.position)
        return false;
    m_history = std::move(saved.history);
    return true;
}

qsizetype PromptFeeder::fromCheckpoint(const std::vector<int32_t> &prompt)
{
    // The engine's match is token for token and stops before any image, so the state then
    // holds exactly the prompt's first n tokens.
    const int n = waste::reusePrefix(*m_model, prompt);
    m_kept = n > 0 ? Kept::Checkpoint : Kept::Nothing;
    m_history.clear();
    m_history.appendPrompt(std::span<const int32_t>(prompt).first(size_t(n)));
    return n;
}

PromptFeeder::Prepared PromptFeeder::prepare(const QList<PromptSegment> &segments, const QStringList &images, bool reuse,
                                             const QString &stateFile, bool place)
{
    Prepared p;
    p.prompt = tokenize(segments, &p.segmentEnds);
    m_kept = Kept::Nothing;
    p.reused = reuse ? keptPrefix(p.prompt, images, stateFile, p.restored) : 0;
    if (p.reused == 0) {
        p.restored = false;
        m_model->resetState();
        m_history.clear();
    }
    if (place)
        placeImages(p, images);
    p.positionBefore = m_model->position();
    return p;
}

void PromptFeeder::record(const Prepared &p, const waste::GenResult &r)
{
    // What is in the state now: the fed part of the prompt, then the generated tokens that
    // were fed (a stop token, or the last token of a cancelled or context-full answer, is
    // sampled but never fed).
    const qsizetype fed = std::clamp<qsizetype>(m_model->position() - p.positionBefore - r.promptTokens, 0,
                                                qsizetype(r.tokens.size()));
    m_history.appendPrompt(p.rest());
    const std::span<const int32_t> generated(r.tokens.data(), size_t(fed));
    // The text of exactly those tokens as a reply comes back (invalid UTF-8 as U+FFFD): with
    // the special tokens the model wrote (the chat's raw reply), or without them (a client's
    // content, where markup is never text). Either matches the reply rendered back, unless a
    // stop string or a cancel cut it short.
    std::vector<int32_t> visible;
    for (const int32_t t : generated)
        if (!m_model->isSpecialToken(t))
            visible.push_back(t);
    m_history.appendGenerated(generated, waste::sanitizeUtf8(m_model->detokenize(generated)),
                              waste::sanitizeUtf8(m_model->detokenize(visible)));
}

void PromptFeeder::reset()
{
    if (m_model)
        m_model->resetState();
    m_history.clear();
}

void PromptFeeder::save(const QString &stateFile, const QJsonObject &extra) const
{
    if (m_kept == Kept::LiveState) {
        savedstate::save(*m_model, stateFile, m_history, m_identity, extra, waste::SavedParts::LiveState);
        return;
    }
    // The checkpoint generate() kept at this answer's start: the history without the answer.
    const int at = waste::checkpointPosition(*m_model);
    if (m_kept == Kept::Checkpoint && at > 0 && at == m_model->position() - m_history.trailingGenerated()) {
        savedstate::save(*m_model, stateFile, m_history.withoutTrailingGenerated(), m_identity, extra,
                         waste::SavedParts::Checkpoint, at);
        return;
    }
    savedstate::save(*m_model, stateFile, m_history, m_identity, extra);
}

std::optional<QJsonObject> PromptFeeder::restore(const QString &stateFile)
{
    std::optional<savedstate::Record> saved = savedstate::readRecord(stateFile, m_identity);
    if (!saved)
        return std::nullopt;
    m_model->loadState(stateFile.toStdString());
    if (m_model->position() != saved->position) {
        reset();
        return std::nullopt;
    }
    m_history = std::move(saved->history);
    return saved->extra;
}

qsizetype PromptFeeder::placeImages(Prepared &p, const QStringList &images)
{
    // The kept part's images are in the state; the others are encoded now, in order.
    m_model->clearImages();
    qsizetype added = 0;
    for (qsizetype i = m_history.countPromptToken(m_mediaToken); i < images.size(); ++i)
        added += m_model->addImage(images.at(i).toStdString()) - 1;
    p.positionBefore = m_model->position();
    return added;
}

void PromptFeeder::useCache(Prepared &p, PromptCache &cache)
{
    const PromptCache::Hit hit = cache.longest(m_identity, p.prompt, p.reused);
    if (hit.path.isEmpty())
        return;
    // An entry's tokens are the prompt's own: one that reached into an image would hold no
    // picture for it.
    const auto cached = p.prompt.begin() + hit.tokens;
    if (m_mediaToken >= 0 && std::find(p.prompt.begin(), cached, m_mediaToken) != cached)
        return;
    std::optional<savedstate::Record> saved = savedstate::readRecord(hit.path, m_identity);
    if (saved && load(hit.path, *saved)) {
        m_kept = Kept::LiveState;
        p.reused = hit.tokens;
        p.restored = true;
    } else {
        // Damaged (or not what its record says): dropped, and the prompt is read whole, from a
        // clean state (a load that went wrong may have left anything in it).
        cache.drop(hit.path);
        m_model->resetState();
        m_history.clear();
        m_kept = Kept::Nothing;
        p.reused = 0;
        p.restored = false;
    }
    p.positionBefore = m_model->position();
}

void PromptFeeder::feedPrefix(Prepared &p, qsizetype end, const waste::PrefillCallback &progress)
{
    const std::span<const int32_t> part = std::span<const int32_t>(p.prompt).subspan(
        size_t(p.reused), size_t(std::clamp<qsizetype>(end - p.reused, 0, qsizetype(p.prompt.size()) - p.reused)));
    if (part.empty())
        return;
    try {
        m_model->eval(part, progress);
    } catch (...) {
        reset(); // stopped (or failed) mid-read: the state holds part of it
        throw;
    }
    m_history.appendPrompt(part);
    p.reused += qsizetype(part.size());
    p.positionBefore = m_model->position();
}

qsizetype PromptFeeder::cacheMark(const Prepared &p, int reusableSegments, PromptCache &cache) const
{
    if (!cache.enabled() || reusableSegments <= 0 || size_t(reusableSegments) > p.segmentEnds.size())
        return 0;
    // An entry holds text only: it ends at the last segment boundary before the first image
    // (the shared segments may reach into the last message, as far as its picture).
    const size_t firstImage =
        m_mediaToken >= 0 ? size_t(std::find(p.prompt.begin(), p.prompt.end(), m_mediaToken) - p.prompt.begin())
                          : p.prompt.size();
    qsizetype end = 0;
    for (size_t k = 0; k < size_t(reusableSegments); ++k)
        if (p.segmentEnds[k] <= firstImage)
            end = qsizetype(p.segmentEnds[k]);
    if (end <= p.reused || end >= qsizetype(p.prompt.size()) || end < cache.minTokens())
        return 0;
    return cache.contains(m_identity, std::span<const int32_t>(p.prompt).first(size_t(end))) ? 0 : end;
}

void PromptFeeder::saveToCache(std::span<const int32_t> prefix, PromptCache &cache) const
{
    if (qsizetype(prefix.size()) != m_model->position())
        return; // the state is not where the prefix ends
    const QString path = cache.pathFor(m_identity, prefix);
    StateHistory h;
    h.appendPrompt(prefix);
    try {
        savedstate::save(*m_model, path, h, m_identity, {}, waste::SavedParts::LiveState);
        cache.added(path);
    } catch (const std::exception &e) {
        qWarning("the prompt cache did not keep a prefix of %zu tokens: %s", prefix.size(), e.what());
        savedstate::remove(path);
    }
}
