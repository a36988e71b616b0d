#include "engine/engineworker.h"

#include "prompt/dialoguerenderer.h"
#include "engine/savedstate.h"

#include <QFileInfo>
#include <QMutexLocker>

#include <algorithm>
#include <cstdio>
#include <new>

namespace {

GenerationError errorFrom(const waste::Error &e)
{
    return {e.code(), QString::fromStdString(e.argument()), QString::fromStdString(e.what())};
}

double hitRateBetween(const waste::Stats &before, const waste::Stats &after)
{
    const double hits = double(after.demandHits - before.demandHits);
    const double misses = double(after.demandMisses - before.demandMisses);
    return hits + misses > 0 ? hits / (hits + misses) : 0.0;
}

} // namespace

EngineWorker::EngineWorker(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<GenerationRequest>();
    qRegisterMetaType<GenerationStats>();
    qRegisterMetaType<GenerationResult>();
    qRegisterMetaType<GenerationError>();
    qRegisterMetaType<PromptSegment>();
    qRegisterMetaType<waste::ReplyDelta>();
}

EngineWorker::~EngineWorker() = default;

void EngineWorker::requestCancel(quint64 id)
{
    if (id == 0) {
        m_cancelLoad = true;
        return;
    }
    QMutexLocker lock(&m_cancelMutex);
    m_cancelled.insert(id);
}

void EngineWorker::cancelAll()
{
    m_cancelLoad = true;
    m_cancelEverything = true;
}

bool EngineWorker::isCancelled(quint64 id) const
{
    if (m_cancelEverything)
        return true;
    QMutexLocker lock(&m_cancelMutex);
    return m_cancelled.contains(id);
}

void EngineWorker::openModel(const QString &path, qint64 budgetBytes, int ctxTokens)
{
    m_cancelLoad = false;
    m_cancelEverything = false;
    m_feeder.setModel(nullptr, {});
    m_model.reset();
    waste::OpenOptions options;
    options.ramBudget = budgetBytes;
    options.ctxTokens = ctxTokens > 0 ? ctxTokens : 4096;
    options = waste::withEnvironment(options);
    options.progress = [this](double f) {
        Q_EMIT loadProgress(f);
        return !m_cancelLoad.load();
    };
    try {
        m_model = waste::Model::open(QFileInfo(path).absoluteFilePath().toStdString(), options);
        for (const std::string &w : m_model->info().warnings)
            std::fprintf(stderr, "waste: warning: %s\n", w.c_str());
        m_feeder.setModel(m_model.get(), savedstate::modelIdentity(path, options.ctxTokens));
        Q_EMIT loadProgress(1.0);
        Q_EMIT modelOpened(path, describeModel());
    } catch (const std::exception &e) {
        m_model.reset();
        Q_EMIT modelOpenFailed(path, QString::fromStdString(e.what()));
    }
}

void EngineWorker::closeModel()
{
    m_feeder.setModel(nullptr, {});
    m_model.reset();
    Q_EMIT modelClosed();
}

QVariantMap EngineWorker::describeModel() const
{
    const waste::ModelInfo &i = m_model->info();
    return {
        {QStringLiteral("arch"), QString::fromStdString(i.arch)},
        {QStringLiteral("layers"), i.layers},
        {QStringLiteral("experts"), i.experts},
        {QStringLiteral("topK"), i.topK},
        {QStringLiteral("hidden"), i.hidden},
        {QStringLiteral("vocab"), i.vocab},
        {QStringLiteral("ctxMax"), i.ctxMax},
        {QStringLiteral("paramsTotal"), qint64(i.paramsTotal)},
        {QStringLiteral("paramsActive"), qint64(i.paramsActive)},
        {QStringLiteral("quantization"), QString::fromStdString(i.quantization)},
        {QStringLiteral("expertCacheBytes"), qint64(i.expertCacheBytes)},
        {QStringLiteral("budgetBytes"), qint64(i.budgetBytes)},
        {QStringLiteral("hasVision"), i.hasVision},
        {QStringLiteral("hasChatTemplate"), i.hasChatTemplate},
        {QStringLiteral("chatFormat"), QVariant::fromValue(i.chatFormat)},
    };
}

void EngineWorker::countDialogue(quint64 id, const Dialogue &dialogue, waste::ChatFormat format)
{
    if (!m_model) {
        Q_EMIT tokensCounted(id, -1);
        return;
    }
    try {
        Q_EMIT tokensCounted(id, int(m_feeder.tokenize(renderDialogue(dialogue, format).segments).size()));
    } catch (const std::exception &) { // an image that can no longer be read: sending says so in words
        Q_EMIT tokensCounted(id, -1);
    }
}

void EngineWorker::countSegments(quint64 id, const QList<PromptSegment> &segments)
{
    Q_EMIT tokensCounted(id, m_model ? int(m_feeder.tokenize(segments).size()) : -1);
}

void EngineWorker::forgetState(const QString &stateFile)
{
    if (!stateFile.isEmpty())
        savedstate::remove(stateFile);
}

void EngineWorker::saveState(const GenerationRequest &request)
{
    if (request.stateFile.isEmpty() || !m_model || m_feeder.history().empty())
        return;
    try {
        m_feeder.save(request.stateFile);
        savedstate::prune(QFileInfo(request.stateFile).absolutePath(), kSavedStatesKept);
    } catch (const std::exception &e) {
        // Only a cost: reopening the conversation reads its history again.
        qWarning("EngineWorker: the conversation state was not saved: %s", e.what());
        savedstate::remove(request.stateFile);
    }
}

void EngineWorker::generate(const GenerationRequest &request)
{
    const quint64 id = request.id;
    if (!m_model) {
        Q_EMIT generationFailed(id, GenerationError{{}, {}, tr("No model is open: open one on the Models page first.")});
        return;
    }
    if (isCancelled(id)) {
        GenerationResult cancelled;
        cancelled.finishReason = waste::FinishReason::Cancelled;
        Q_EMIT generationFinished(id, cancelled);
        return;
    }
    m_current = id;
    try {
        // Prefix reuse: when the state (in memory or saved for this conversation) holds a
        // prefix of this prompt, only the rest is fed, with only the images in the rest.
        const PromptFeeder::Prepared prepared =
            m_feeder.prepare(request.segments, request.imagePaths, request.reuseState, request.stateFile);
        const size_t promptSize = prepared.prompt.size();
        const qsizetype reused = prepared.reused;

        waste::GenParams params = request.params;
        if (request.makeConstraint)
            params.constraint = request.makeConstraint(*m_model, params.maxTokens, prepared.prompt);
        if (request.parseReply)
            params.reply = m_model->replyParser(prepared.prompt);

        Q_EMIT generationStarted(id, int(promptSize), int(reused));
        const waste::Stats before = m_model->stats();

        QElapsedTimer clock;
        clock.start();
        QElapsedTimer sinceEmit;
        sinceEmit.start();
        double prefillSeconds = 0;
        bool prefillDone = false;
        QString pending;
        waste::ReplyDelta pendingReply;
        waste::ChatReply sentReply; // what replyReady has carried so far
        auto sendReply = [&](waste::ReplyDelta &d) {
            sentReply.reasoning += d.reasoning;
            sentReply.content += d.content;
            sentReply.toolCalls.insert(sentReply.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
            Q_EMIT replyReady(id, d);
            d = waste::ReplyDelta{};
        };
        GenerationStats live;
        live.promptTokens = int(promptSize);
        live.reusedTokens = int(reused);
        live.restoredState = prepared.restored;

        auto onPrefill = [&](int done, int total) {
            Q_EMIT prefillProgress(id, done, total);
            return !isCancelled(id);
        };
        auto onToken = [&](const waste::TokenEvent &ev) {
            if (!prefillDone) {
                prefillDone = true;
                prefillSeconds = clock.elapsed() / 1000.0;
            }
            pending += QString::fromStdString(ev.text);
            pendingReply.append(ev.reply);
            live.completionTokens = ev.index + 1;
            if (!ev.reply.reasoning.empty())
                live.reasoningTokens = ev.index + 1;
            live.prefillSeconds = prefillSeconds;
            live.decodeSeconds = clock.elapsed() / 1000.0 - prefillSeconds;
            live.tokensPerSecond = live.decodeSeconds > 0 ? live.completionTokens / live.decodeSeconds : 0;
            live.hitRate = hitRateBetween(before, ev.stats);
            live.bytesRead = ev.stats.bytesRead - before.bytesRead;
            live.prefilledTokens = int(ev.stats.tokensPrefilled - before.tokensPrefilled);
            // Batch streamed text: one queued signal per ~40 ms, not one per token.
            if (sinceEmit.elapsed() >= kBatchMs || !pendingReply.toolCalls.empty()) {
                Q_EMIT tokensReady(id, pending, live);
                pending.clear();
                if (request.parseReply && !pendingReply.empty())
                    sendReply(pendingReply);
                sinceEmit.restart();
            }
            return !isCancelled(id);
        };

        waste::GenResult r = m_model->generate(prepared.rest(), params, onToken, onPrefill);
        if (!pending.isEmpty())
            Q_EMIT tokensReady(id, pending, live);
        if (request.parseReply) {
            // What the events did not carry (a cancel or a full context ends generation
            // after the last event): the rest of the final reply.
            waste::ReplyDelta rest;
            rest.reasoning = r.reply.reasoning.substr(std::min(sentReply.reasoning.size(), r.reply.reasoning.size()));
            rest.content = r.reply.content.substr(std::min(sentReply.content.size(), r.reply.content.size()));
            rest.toolCalls.assign(r.reply.toolCalls.begin() + std::ptrdiff_t(std::min(sentReply.toolCalls.size(), r.reply.toolCalls.size())),
                                  r.reply.toolCalls.end());
            rest.done = true;
            // Reasoning released only at the end (held back, then let go) ran to the last token.
            if (!rest.reasoning.empty())
                live.reasoningTokens = int(r.tokens.size());
            sendReply(rest);
        }

        m_feeder.record(prepared, r);

        GenerationResult result;
        result.text = QString::fromStdString(r.text);
        result.finishReason = isCancelled(id) ? waste::FinishReason::Cancelled : r.finish;
        for (int32_t t : r.tokens)
            result.tokens.append(t);
        result.reply = std::move(r.reply);
        result.stats = live;
        result.stats.completionTokens = int(r.tokens.size());
        if (!prefillDone)
            result.stats.prefillSeconds = clock.elapsed() / 1000.0;
        result.stats.hitRate = hitRateBetween(before, r.stats);
        result.stats.bytesRead = r.stats.bytesRead - before.bytesRead;
        result.stats.prefilledTokens = int(r.stats.tokensPrefilled - before.tokensPrefilled);
        Q_EMIT generationFinished(id, result);
        saveState(request);
    } catch (const waste::Error &e) {
        if (e.code() == waste::ErrorCode::Cancelled) {
            GenerationResult cancelled;
            cancelled.finishReason = waste::FinishReason::Cancelled;
            Q_EMIT generationFinished(id, cancelled);
        } else {
            Q_EMIT generationFailed(id, errorFrom(e));
        }
        // After an error mid-layer the state is undefined: start clean next time.
        m_feeder.reset();
    } catch (const std::bad_alloc &e) {
        Q_EMIT generationFailed(id, GenerationError{waste::ErrorCode::OutOfMemory, {}, QString::fromStdString(e.what())});
        m_feeder.reset();
    } catch (const std::exception &e) {
        Q_EMIT generationFailed(id, GenerationError{{}, {}, QString::fromStdString(e.what())});
        m_feeder.reset();
    }
    m_current = 0;
    QMutexLocker lock(&m_cancelMutex);
    m_cancelled.remove(id);
}
