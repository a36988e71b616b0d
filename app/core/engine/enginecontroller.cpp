#include "engine/enginecontroller.h"

#include "remote/remoteengine.h"
#include "threads/threadpriority.h"

#include <QDir>
#include <QFileInfo>

EngineController::EngineController(QObject *parent) : QObject(parent)
{
    m_thread.setObjectName(QStringLiteral("EngineWorker"));
    m_worker = new EngineWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);

    connect(m_worker, &EngineWorker::loadProgress, this, [this](double f) {
        m_loadProgress = f;
        Q_EMIT loadProgressChanged();
    });
    connect(m_worker, &EngineWorker::modelOpened, this, [this](const QString &path, const QVariantMap &info) {
        if (supersededByRemote(path))
            return;
        m_modelPath = path;
        m_info = info;
        forgetStats();
        setState(Ready);
        Q_EMIT modelChanged();
    });
    connect(m_worker, &EngineWorker::modelOpenFailed, this, [this](const QString &path, const QString &message) {
        if (supersededByRemote(path))
            return;
        m_modelPath.clear();
        m_info.clear();
        forgetStats();
        setState(Failed, message);
        Q_EMIT modelChanged();
        Q_EMIT modelOpenFailed(path, message);
    });
    connect(m_worker, &EngineWorker::modelClosed, this, [this] {
        if (supersededByRemote({})) // the local model was closed to make way for a remote engine
            return;
        m_modelPath.clear();
        m_info.clear();
        forgetStats();
        setState(NoModel);
        Q_EMIT modelChanged();
    });
    // The worker reports by request id; each report goes to that request's handle only.
    connect(m_worker, &EngineWorker::generationStarted, this, [this](quint64 id, int promptTokens, int reused) {
        if (GenerationHandle *h = handleFor(id))
            Q_EMIT h->started(promptTokens, reused);
    });
    connect(m_worker, &EngineWorker::prefillProgress, this, [this](quint64 id, int done, int total) {
        if (GenerationHandle *h = handleFor(id))
            Q_EMIT h->prefillProgress(done, total);
    });
    connect(m_worker, &EngineWorker::tokensCounted, this, [this](quint64 id, int tokens) {
        if (TokenCount *count = m_counts.take(id)) {
            count->deleteLater();
            Q_EMIT count->counted(tokens);
        }
    });
    connect(m_worker, &EngineWorker::replyReady, this, [this](quint64 id, const waste::ReplyDelta &delta) {
        if (GenerationHandle *h = handleFor(id))
            Q_EMIT h->reply(delta);
    });
    connect(m_worker, &EngineWorker::tokensReady, this,
            [this](quint64 id, const QString &text, const GenerationStats &stats) {
                m_lastTokensPerSecond = stats.tokensPerSecond;
                m_lastHitRate = stats.hitRate;
                Q_EMIT statsChanged();
                if (GenerationHandle *h = handleFor(id))
                    Q_EMIT h->tokens(text, stats);
            });
    connect(m_worker, &EngineWorker::generationFinished, this, [this](quint64 id, const GenerationResult &r) {
        if (r.stats.completionTokens > 0) {
            m_lastTokensPerSecond = r.stats.tokensPerSecond;
            m_lastHitRate = r.stats.hitRate;
            Q_EMIT statsChanged();
        }
        GenerationHandle *h = handleFor(id);
        requestDone(id);
        if (h)
            Q_EMIT h->finished(r);
    });
    connect(m_worker, &EngineWorker::generationFailed, this, [this](quint64 id, const GenerationError &error) {
        GenerationHandle *h = handleFor(id);
        requestDone(id);
        if (h)
            Q_EMIT h->failed(error);
    });
    connect(m_worker, &EngineWorker::runningChanged, this, [this](int running) {
        m_running = running;
        Q_EMIT activeRequestsChanged();
    });
    connectRemote();
    // Runs on the new thread before its event loop starts.
    connect(&m_thread, &QThread::started, m_worker, [] { setCurrentThreadRole(ThreadRole::Engine); }, Qt::DirectConnection);
    m_thread.start();
}

EngineController::~EngineController()
{
    delete m_remote; // drops its requests silently: no report reaches a controller going away
    m_remote = nullptr;
    m_worker->cancelAll();
    m_thread.quit();
    m_thread.wait();
}

QString EngineController::stateText() const
{
    switch (m_state) {
    case NoModel:
        return tr("no model");
    case Loading:
        return tr("loading %1%").arg(int(m_loadProgress * 100));
    case Ready:
        return unreachable().isEmpty() ? tr("ready") : tr("not answering");
    case Generating:
        return tr("generating");
    case Failed:
        return tr("error");
    }
    return {};
}

QString EngineController::modelName() const
{
    if (m_modelPath.isEmpty())
        return {};
    if (isRemote())
        return m_info.value(QStringLiteral("name")).toString();
    QString name = QFileInfo(QDir::cleanPath(m_modelPath)).fileName();
    if (name.endsWith(QStringLiteral(".waste")))
        name.chop(6);
    return name;
}

void EngineController::setState(State s, const QString &error)
{
    if (m_state == s && m_error == error)
        return;
    m_state = s;
    m_error = error;
    Q_EMIT stateChanged();
}

void EngineController::forgetStats()
{
    // The last speed and hit rate belong to the model that produced them; the status bar
    // must not show them under the next model's name.
    if (m_lastTokensPerSecond == 0 && m_lastHitRate == 0)
        return;
    m_lastTokensPerSecond = 0;
    m_lastHitRate = 0;
    Q_EMIT statsChanged();
}

void EngineController::openModel(const QString &path, qint64 budgetBytes, int ctxTokens)
{
    if (remoteendpoint::isRemotePath(path))
        return openRemote(path);
    m_remote->close();
    m_loadProgress = 0;
    m_ctxTokens = ctxTokens;
    Q_EMIT loadProgressChanged();
    setState(Loading);
    QMetaObject::invokeMethod(m_worker, [w = m_worker, path, budgetBytes, ctxTokens] {
        w->openModel(path, budgetBytes, ctxTokens);
    }, Qt::QueuedConnection);
}

void EngineController::closeModel()
{
    if (m_remote->isActive()) {
        m_remote->close();
        m_modelPath.clear();
        m_info.clear();
        setState(NoModel);
        Q_EMIT modelChanged();
        return;
    }
    m_worker->requestCancel(0);
    QMetaObject::invokeMethod(m_worker, &EngineWorker::closeModel, Qt::QueuedConnection);
}

void EngineController::cancel(quint64 id)
{
    if (m_remote->owns(id) || (id == 0 && m_remote->isActive()))
        return m_remote->cancel(id);
    m_worker->requestCancel(id);
}

GenerationHandle *EngineController::generate(GenerationRequest request)
{
    request.id = m_nextId++;
    auto *handle = new GenerationHandle(this, request.id);
    m_handles.insert(request.id, handle);
    ++m_active;
    Q_EMIT activeRequestsChanged();
    if (m_state == Ready)
        setState(Generating);
    if (m_remote->isOpen())
        m_remote->generate(request);
    else
        QMetaObject::invokeMethod(m_worker, [w = m_worker, request] { w->generate(request); }, Qt::QueuedConnection);
    Q_EMIT generationQueued(handle);
    return handle;
}

TokenCount *EngineController::countDialogue(const Dialogue &dialogue, waste::ChatFormat format)
{
    const quint64 id = m_nextId++;
    auto *count = new TokenCount(this);
    m_counts.insert(id, count);
    if (m_remote->isOpen()) {
        // The remote server's tokenizer is not here: the count is unknown (-1), not guessed.
        QMetaObject::invokeMethod(m_worker, [w = m_worker, id] { Q_EMIT w->tokensCounted(id, -1); }, Qt::QueuedConnection);
        Q_EMIT countQueued(count);
        return count;
    }
    QMetaObject::invokeMethod(m_worker, [w = m_worker, id, dialogue, format] { w->countDialogue(id, dialogue, format); },
                              Qt::QueuedConnection);
    Q_EMIT countQueued(count);
    return count;
}

TokenCount *EngineController::countSegments(const QList<PromptSegment> &segments)
{
    const quint64 id = m_nextId++;
    auto *count = new TokenCount(this);
    m_counts.insert(id, count);
    QMetaObject::invokeMethod(m_worker, [w = m_worker, id, segments] { w->countSegments(id, segments); },
                              Qt::QueuedConnection);
    Q_EMIT countQueued(count);
    return count;
}

void EngineController::forgetState(const QString &stateFile)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, stateFile] { w->forgetState(stateFile); },
                              Qt::QueuedConnection);
}

void EngineController::setPromptCache(const QString &dir, qint64 maxBytes, int minTokens)
{
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, dir, maxBytes, minTokens] { w->setPromptCache(dir, maxBytes, minTokens); },
        Qt::QueuedConnection);
}

void EngineController::requestDone(quint64 id)
{
    // Deleted once the end has been delivered (the emit follows this call).
    if (GenerationHandle *h = m_handles.take(id))
        h->deleteLater();
    m_active = qMax(0, m_active - 1);
    Q_EMIT activeRequestsChanged();
    if (m_active == 0 && m_state == Generating)
        setState(Ready);
}
