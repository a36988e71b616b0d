#include "engine/engineworker.h"

#include "prompt/dialoguerenderer.h"
#include "engine/generationemitter.h"
#include "engine/savedstate.h"

#include <QFileInfo>
#include <QMutexLocker>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <new>
#include <optional>
#include <utility>

namespace {

GenerationError errorFrom(const waste::Error &e)
{
    return {e.code(), QString::fromStdString(e.argument()), QString::fromStdString(e.what())};
}

} // namespace

// A request in the batch: what it asked, how its prompt was prepared on the session (when
// it continues the session), and its client's side.
struct EngineWorker::Running {
    GenerationRequest request;
    bool session = false;
    PromptFeeder::Prepared prepared;
    std::optional<GenerationEmitter> emitter;
    bool forgetAfter = false; // forgetState() asked for its conversation while it ran
};

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

void EngineWorker::forgetCancel(quint64 id)
{
    QMutexLocker lock(&m_cancelMutex);
    m_cancelled.remove(id);
}

void EngineWorker::openModel(const QString &path, qint64 budgetBytes, int ctxTokens)
{
    drain();
    m_cancelLoad = false;
    m_cancelEverything = false;
    m_feeder.setModel(nullptr, {});
    m_batch.reset();
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
        m_model = waste::openForBatch(QFileInfo(path).absoluteFilePath().toStdString(), options, kSequencesWanted);
        m_batch = std::make_unique<waste::Batch>(*m_model);
        for (const std::string &w : m_model->info().warnings)
            std::fprintf(stderr, "waste: warning: %s\n", w.c_str());
        m_feeder.setModel(m_model.get(), savedstate::modelIdentity(path, options.ctxTokens, m_model->info().trainedRounding));
        Q_EMIT loadProgress(1.0);
        Q_EMIT modelOpened(path, describeModel());
    } catch (const std::exception &e) {
        m_batch.reset();
        m_model.reset();
        Q_EMIT modelOpenFailed(path, QString::fromStdString(e.what()));
    }
}

void EngineWorker::closeModel()
{
    drain();
    m_feeder.setModel(nullptr, {});
    m_batch.reset();
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
        {QStringLiteral("sequences"), m_batch->capacity()},
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
    if (stateFile.isEmpty())
        return;
    // A request still decoding for this conversation would save it again at its end: the
    // removal waits for that.
    for (auto &[seq, run] : m_running)
        if (run->request.stateFile == stateFile) {
            run->forgetAfter = true;
            return;
        }
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
    // On an idle engine the first step waits kGatherMs for requests sent together (an API
    // client's parallel calls reach this thread a few ms apart): their prompts are then read
    // in one pass, each expert once for all of them, instead of the first alone and the
    // others after it in pieces.
    const bool idle = m_waiting.empty() && m_current == 0 && (!m_batch || m_batch->active() == 0);
    m_waiting.push_back(request);
    reportRequests();
    schedulePump(idle && m_model && request.imagePaths.isEmpty() ? kGatherMs : 0);
}

void EngineWorker::schedulePump(int delayMs)
{
    if (m_pumpQueued)
        return;
    m_pumpQueued = true;
    // Queued, so the requests and cancels that arrived meanwhile are seen before the next step.
    auto run = [this] {
        m_pumpQueued = false;
        pump();
    };
    if (delayMs > 0)
        QTimer::singleShot(delayMs, this, run);
    else
        QMetaObject::invokeMethod(this, run, Qt::QueuedConnection);
}

void EngineWorker::pump()
{
    if (pumpOnce())
        schedulePump();
}

void EngineWorker::drain()
{
    while (pumpOnce()) {
    }
}

void EngineWorker::reportRequests()
{
    const int running = (m_batch ? m_batch->active() : 0) + (m_current ? 1 : 0);
    if (running == m_reportedRunning)
        return;
    m_reportedRunning = running;
    Q_EMIT runningChanged(running);
}

void EngineWorker::failAllRunning(const QString &message)
{
    // A fresh batch: the old one's sequences are in an unknown state, as is the session.
    m_batch = std::make_unique<waste::Batch>(*m_model);
    m_feeder.reset();
    std::map<waste::Batch::Id, std::unique_ptr<Running>> running;
    running.swap(m_running);
    for (auto &[seqId, run] : running) {
        Q_EMIT generationFailed(run->request.id, GenerationError{{}, {}, message});
        if (run->forgetAfter)
            savedstate::remove(run->request.stateFile);
        forgetCancel(run->request.id);
    }
    reportRequests();
}

bool EngineWorker::pumpOnce()
{
    while (!m_waiting.empty()) {
        const GenerationRequest &next = m_waiting.front();
        if (m_model && next.imagePaths.isEmpty() && !admitsNow(next))
            break; // no room: it waits for a sequence to end
        if (m_model && !next.imagePaths.isEmpty() && m_batch->active() > 0)
            break; // images are not batched: alone, once the batch is empty
        const GenerationRequest request = next;
        m_waiting.pop_front();
        reportRequests();
        if (!m_model || isCancelled(request.id) || !request.imagePaths.isEmpty())
            runAlone(request); // says why when there is no model; ends a cancelled request
        else
            startInBatch(request);
    }
    if (m_batch && m_batch->active() > 0) {
        std::vector<waste::Batch::Ended> ended;
        try {
            ended = m_batch->step();
        } catch (const std::exception &e) {
            // The batch ends its own sequences' failures; anything else it lets through must
            // still end every request with the error instead of leaving this thread's loop.
            failAllRunning(QString::fromStdString(e.what()));
            return !m_waiting.empty();
        }
        // The count drops before the ends are told: a client that has its answer and asks
        // /health at once must not see the finished sequences still running.
        reportRequests();
        for (waste::Batch::Ended &e : ended) {
            auto it = m_running.find(e.id);
            if (it == m_running.end())
                continue;
            const std::unique_ptr<Running> run = std::move(it->second);
            m_running.erase(it);
            const quint64 id = run->request.id;
            if (e.failed) {
                // The session's history no longer says what its state holds: start clean next time.
                if (run->session)
                    m_feeder.reset();
                if (e.code == waste::ErrorCode::Cancelled) {
                    GenerationResult cancelled;
                    cancelled.finishReason = waste::FinishReason::Cancelled;
                    Q_EMIT generationFinished(id, cancelled);
                } else {
                    Q_EMIT generationFailed(id, GenerationError{e.code, {}, QString::fromStdString(e.message)});
                }
            } else {
                if (run->session)
                    m_feeder.record(run->prepared, e.result);
                run->emitter->finish(e.result);
                if (run->session)
                    saveState(run->request);
            }
            if (run->forgetAfter)
                savedstate::remove(run->request.stateFile);
            forgetCancel(id);
        }
    }
    reportRequests();
    return !m_waiting.empty() || (m_batch && m_batch->active() > 0);
}

bool EngineWorker::admitsNow(const GenerationRequest &request)
{
    if (isCancelled(request.id))
        return true; // ended at once, in no place
    if (!m_batch->sessionInUse())
        return m_batch->admits(0, 0, true); // it continues the session, whose state is there
    // Its own state, sized to its prompt and max_tokens: short requests run more at once.
    // Tokenized once while it waits; startInBatch takes these tokens.
    if (m_waitingPrompt.first != request.id) {
        try {
            m_waitingPrompt = {request.id, m_feeder.tokenize(request.segments)};
        } catch (const std::exception &) {
            return true; // startInBatch says what is wrong with it
        }
    }
    return m_batch->admits(m_waitingPrompt.second.size(), request.params.maxTokens, false);
}

void EngineWorker::setPromptCache(const QString &dir, qint64 maxBytes, int minTokens)
{
    m_cache.configure(dir, maxBytes);
    m_cache.setMinTokens(minTokens);
}

void EngineWorker::startInBatch(const GenerationRequest &request)
{
    const quint64 id = request.id;
    auto run = std::make_unique<Running>();
    run->request = request;
    run->session = !m_batch->sessionInUse();
    auto waited = std::exchange(m_waitingPrompt, {});
    try {
        waste::Batch::Request seq;
        std::vector<int32_t> whole;
        if (run->session) {
            // Prefix reuse: when the state (in memory or saved for this conversation) holds a
            // prefix of this prompt, only the rest is fed.
            run->prepared = m_feeder.prepare(request.segments, {}, request.reuseState, request.stateFile);
            if (request.reuseState && m_cache.enabled())
                m_feeder.useCache(run->prepared, m_cache);
            whole = run->prepared.prompt;
            seq.prompt.assign(run->prepared.rest().begin(), run->prepared.rest().end());
            // The state after the reusable prefix (system prompt, tools, earlier turns) goes to
            // the prompt cache on the way, unless it is there already.
            if (const qsizetype mark = m_feeder.cacheMark(run->prepared, request.reusableSegments, m_cache); mark > 0) {
                seq.markAt = size_t(mark - run->prepared.reused);
                seq.onMark = [this, kept = std::vector<int32_t>(whole.begin(), whole.begin() + mark)] {
                    m_feeder.saveToCache(kept, m_cache);
                };
            }
        } else {
            if (waited.first == id)
                whole = std::move(waited.second); // tokenized by admitsNow
            else
                whole = m_feeder.tokenize(request.segments);
            seq.prompt = whole;
        }
        seq.params = request.params;
        if (request.makeConstraint)
            seq.params.constraint = request.makeConstraint(*m_model, seq.params.maxTokens, whole);
        if (request.parseReply)
            seq.params.reply = m_model->replyParser(whole, request.replyTools.toStdString());
        seq.useSession = run->session;
        const int reused = int(run->prepared.reused);
        run->emitter.emplace(*this, request, int(whole.size()), reused, run->prepared.restored, m_model->stats(),
                             [this, id] { return isCancelled(id); });
        GenerationEmitter *emitter = &*run->emitter;
        seq.onToken = [emitter](const waste::TokenEvent &ev) { return emitter->onToken(ev); };
        seq.onPrefill = [emitter](int done, int total) { return emitter->onPrefill(done, total); };
        const waste::Batch::Id seqId = m_batch->add(std::move(seq));
        // Started once the batch took it: a prompt it refuses (empty, too long) fails as a
        // request that never started, which the server answers as the client's mistake.
        Q_EMIT generationStarted(id, int(whole.size()), reused);
        m_running.emplace(seqId, std::move(run));
        return;
    } catch (const waste::Error &e) {
        Q_EMIT generationFailed(id, errorFrom(e));
    } catch (const std::bad_alloc &e) {
        Q_EMIT generationFailed(id, GenerationError{waste::ErrorCode::OutOfMemory, {}, QString::fromStdString(e.what())});
    } catch (const std::exception &e) {
        Q_EMIT generationFailed(id, GenerationError{{}, {}, QString::fromStdString(e.what())});
    }
    if (run->session)
        m_feeder.reset();
    forgetCancel(id);
}

void EngineWorker::runAlone(const GenerationRequest &request)
{
    const quint64 id = request.id;
    if (!m_model) {
        Q_EMIT generationFailed(id, GenerationError{{}, {}, tr("No model is open: open one on the Models page first.")});
        forgetCancel(id);
        return;
    }
    if (isCancelled(id)) {
        GenerationResult cancelled;
        cancelled.finishReason = waste::FinishReason::Cancelled;
        Q_EMIT generationFinished(id, cancelled);
        forgetCancel(id);
        return;
    }
    m_current = id;
    reportRequests();
    try {
        // Prefix reuse: when the state (in memory or saved for this conversation) holds a
        // prefix of this prompt, only the rest is fed, with only the images in the rest.
        PromptFeeder::Prepared prepared = m_feeder.prepare(request.segments, request.imagePaths, request.reuseState,
                                                           request.stateFile, /*place=*/false);
        // The system prompt and tools before the first image may be in the prompt cache.
        if (request.reuseState && m_cache.enabled())
            m_feeder.useCache(prepared, m_cache);
        const qsizetype cached = prepared.reused;

        waste::GenParams params = request.params;
        if (request.makeConstraint)
            params.constraint = request.makeConstraint(*m_model, params.maxTokens, prepared.prompt);
        if (request.parseReply)
            params.reply = m_model->replyParser(prepared.prompt, request.replyTools.toStdString());

        Q_EMIT generationStarted(id, int(prepared.prompt.size()), int(cached));
        GenerationEmitter emitter(*this, request, int(prepared.prompt.size()), int(cached), prepared.restored,
                                  m_model->stats(), [this, id] { return isCancelled(id); });
        // When they are not kept yet, the system prompt and tools are read first and go to the
        // prompt cache (text only: the images come after them), then the rest with its images;
        // the progress counts both parts as one read. The images are encoded first, so the
        // total counts their positions from the start (they wait through the text-only part).
        const qsizetype imagePositions = m_feeder.placeImages(prepared, request.imagePaths);
        int first = 0;
        if (const qsizetype mark = m_feeder.cacheMark(prepared, request.reusableSegments, m_cache); mark > 0) {
            first = int(mark - prepared.reused);
            const int whole = int(prepared.prompt.size() - prepared.reused + imagePositions);
            m_feeder.feedPrefix(prepared, mark, [&](int done, int) { return emitter.onPrefill(done, whole); });
            m_feeder.saveToCache(std::span<const int32_t>(prepared.prompt).first(size_t(mark)), m_cache);
        }
        const waste::GenResult r = m_model->generate(
            prepared.rest(), params, [&](const waste::TokenEvent &ev) { return emitter.onToken(ev); },
            [&](int done, int total) { return emitter.onPrefill(first + done, first + total); });
        m_feeder.record(prepared, r);
        emitter.finish(r);
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
    reportRequests();
    forgetCancel(id);
}
