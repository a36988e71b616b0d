#include "engineworker.h"

#include <QFileInfo>
#include <QMutexLocker>

#include <algorithm>

namespace {

QString finishReasonName(waste::FinishReason r)
{
    switch (r) {
    case waste::FinishReason::Stop:
        return QStringLiteral("stop");
    case waste::FinishReason::Length:
        return QStringLiteral("length");
    case waste::FinishReason::Cancelled:
        return QStringLiteral("cancelled");
    case waste::FinishReason::ContextFull:
        return QStringLiteral("context_full");
    }
    return QStringLiteral("stop");
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
    qRegisterMetaType<PromptSegment>();
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
    m_model.reset();
    m_history.clear();
    waste::OpenOptions options;
    options.ramBudget = budgetBytes;
    options.ctxTokens = ctxTokens > 0 ? ctxTokens : 4096;
    if (qEnvironmentVariableIsSet("WASTE_LOOKAHEAD"))
        options.lookahead = qEnvironmentVariableIntValue("WASTE_LOOKAHEAD") != 0;
    options.progress = [this](double f) {
        Q_EMIT loadProgress(f);
        return !m_cancelLoad.load();
    };
    try {
        m_model = waste::Model::open(QFileInfo(path).absoluteFilePath().toStdString(), options);
        Q_EMIT loadProgress(1.0);
        Q_EMIT modelOpened(path, describeModel());
    } catch (const std::exception &e) {
        m_model.reset();
        Q_EMIT modelOpenFailed(path, QString::fromStdString(e.what()));
    }
}

void EngineWorker::closeModel()
{
    m_model.reset();
    m_history.clear();
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
    };
}

std::vector<int32_t> EngineWorker::tokenizeSegments(const QList<PromptSegment> &segments) const
{
    std::vector<int32_t> ids;
    for (const PromptSegment &s : segments) {
        const std::vector<int32_t> part = m_model->tokenize(s.text.toStdString(), s.markup);
        ids.insert(ids.end(), part.begin(), part.end());
    }
    return ids;
}

void EngineWorker::countTokens(quint64 id, const QList<PromptSegment> &segments)
{
    if (!m_model) {
        Q_EMIT tokensCounted(id, -1);
        return;
    }
    try {
        Q_EMIT tokensCounted(id, int(tokenizeSegments(segments).size()));
    } catch (const std::exception &) {
        Q_EMIT tokensCounted(id, -1);
    }
}

void EngineWorker::generate(const GenerationRequest &request)
{
    const quint64 id = request.id;
    if (!m_model) {
        Q_EMIT generationFailed(id, tr("No model is open: open one on the Models page first."));
        return;
    }
    if (isCancelled(id)) {
        GenerationResult cancelled;
        cancelled.finishReason = QStringLiteral("cancelled");
        Q_EMIT generationFinished(id, cancelled);
        return;
    }
    m_current = id;
    try {
        std::vector<int32_t> prompt = tokenizeSegments(request.segments);

        // Prefix reuse: when the state already holds a prefix of this prompt, feed only the rest.
        size_t reused = 0;
        const bool images = !request.imagePaths.isEmpty();
        if (request.reuseState && !images && !m_historyHasImages && !m_history.empty()
            && m_history.size() < prompt.size()
            && std::equal(m_history.begin(), m_history.end(), prompt.begin())) {
            reused = m_history.size();
        } else {
            m_model->resetState();
            m_history.clear();
            m_historyHasImages = false;
        }
        m_model->clearImages();
        for (const QString &path : request.imagePaths)
            m_model->addImage(path.toStdString());

        waste::GenParams params = request.params;
        if (request.makeConstraint)
            params.constraint = request.makeConstraint(*m_model, params.maxTokens);

        Q_EMIT generationStarted(id, int(prompt.size()), int(reused));
        const std::span<const int32_t> toFeed(prompt.data() + reused, prompt.size() - reused);
        const waste::Stats before = m_model->stats();

        QElapsedTimer clock;
        clock.start();
        QElapsedTimer sinceEmit;
        sinceEmit.start();
        double prefillSeconds = 0;
        bool prefillDone = false;
        QString pending;
        GenerationStats live;
        live.promptTokens = int(prompt.size());
        live.reusedTokens = int(reused);

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
            live.completionTokens = ev.index + 1;
            live.prefillSeconds = prefillSeconds;
            live.decodeSeconds = clock.elapsed() / 1000.0 - prefillSeconds;
            live.tokensPerSecond = live.decodeSeconds > 0 ? live.completionTokens / live.decodeSeconds : 0;
            live.hitRate = hitRateBetween(before, ev.stats);
            live.bytesRead = ev.stats.bytesRead - before.bytesRead;
            // Batch streamed text: one queued signal per ~40 ms, not one per token.
            if (sinceEmit.elapsed() >= kBatchMs) {
                Q_EMIT tokensReady(id, pending, live);
                pending.clear();
                sinceEmit.restart();
            }
            return !isCancelled(id);
        };

        waste::GenResult r = m_model->generate(toFeed, params, onToken, onPrefill);
        if (!pending.isEmpty())
            Q_EMIT tokensReady(id, pending, live);

        // What is in the state now: prompt + generated tokens, up to the engine's position.
        m_history = prompt;
        m_history.insert(m_history.end(), r.tokens.begin(), r.tokens.end());
        m_history.resize(std::min<size_t>(m_history.size(), size_t(std::max(0, m_model->position()))));
        m_historyHasImages = images;

        GenerationResult result;
        result.text = QString::fromStdString(r.text);
        result.finishReason = isCancelled(id) ? QStringLiteral("cancelled") : finishReasonName(r.finish);
        for (int32_t t : r.tokens)
            result.tokens.append(t);
        result.stats = live;
        result.stats.completionTokens = int(r.tokens.size());
        if (!prefillDone)
            result.stats.prefillSeconds = clock.elapsed() / 1000.0;
        result.stats.hitRate = hitRateBetween(before, r.stats);
        result.stats.bytesRead = r.stats.bytesRead - before.bytesRead;
        Q_EMIT generationFinished(id, result);
    } catch (const waste::Error &e) {
        if (e.code() == waste::ErrorCode::Cancelled) {
            GenerationResult cancelled;
            cancelled.finishReason = QStringLiteral("cancelled");
            Q_EMIT generationFinished(id, cancelled);
        } else {
            Q_EMIT generationFailed(id, QString::fromStdString(e.what()));
        }
        // After an error mid-layer the state is undefined: start clean next time.
        m_model->resetState();
        m_history.clear();
    } catch (const std::exception &e) {
        Q_EMIT generationFailed(id, QString::fromStdString(e.what()));
        m_model->resetState();
        m_history.clear();
    }
    m_current = 0;
    QMutexLocker lock(&m_cancelMutex);
    m_cancelled.remove(id);
}
