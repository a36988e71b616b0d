// EngineController's remote part: a model that is a remote OpenAI-compatible engine
// ("remote:ID" in the library, remote/remotestore.h) is opened and served by a RemoteEngine
// instead of the EngineWorker. The RemoteEngine reports through the worker's own signals,
// so every request's handle, the state and the figures are kept by the one set of handlers
// in enginecontroller.cpp, whichever engine answers.
#include "engine/enginecontroller.h"

#include "remote/remoteengine.h"
#include "remote/remotestore.h"

void EngineController::connectRemote()
{
    m_remote = new RemoteEngine(this);
    // The context is the server's: with no count here (countDialogue answers -1) the chat
    // shows no meter and cuts nothing; a conversation too long is refused by the server,
    // in words. (Connected first: it is set when the handlers below announce the model.)
    connect(m_remote, &RemoteEngine::opened, this, [this] { m_ctxTokens = 0; });
    // Emitted on the GUI thread, these reach the controller's handlers directly, in order.
    connect(m_remote, &RemoteEngine::opened, m_worker, &EngineWorker::modelOpened);
    connect(m_remote, &RemoteEngine::openFailed, m_worker, &EngineWorker::modelOpenFailed);
    connect(m_remote, &RemoteEngine::generationStarted, m_worker, &EngineWorker::generationStarted);
    connect(m_remote, &RemoteEngine::tokensReady, m_worker, &EngineWorker::tokensReady);
    connect(m_remote, &RemoteEngine::replyReady, m_worker, &EngineWorker::replyReady);
    connect(m_remote, &RemoteEngine::generationFinished, m_worker, &EngineWorker::generationFinished);
    connect(m_remote, &RemoteEngine::generationFailed, m_worker, &EngineWorker::generationFailed);
    // A server that stopped answering is shown in the status bar until it answers again.
    connect(m_remote, &RemoteEngine::reachabilityChanged, this, [this](bool reachable, const QString &why) {
        m_remoteUnreachable = reachable ? QString() : (why.isEmpty() ? tr("the server does not answer") : why);
        Q_EMIT stateChanged();
    });
    connect(m_remote, &RemoteEngine::opened, this, [this] {
        m_remoteUnreachable.clear();
        Q_EMIT stateChanged();
    });
}

void EngineController::openRemote(const QString &path)
{
    const RemoteEndpoint endpoint = remotestore::find(remoteendpoint::idOf(path));
    if (!endpoint.isValid()) {
        const QString message = tr("This remote engine is no longer in the library: add it again on the Models page.");
        setState(Failed, message);
        Q_EMIT modelOpenFailed(path, message);
        return;
    }
    // A local model open now is closed: its RAM is freed while the remote engine serves.
    if (!m_modelPath.isEmpty() && !isRemote()) {
        m_worker->requestCancel(0);
        QMetaObject::invokeMethod(m_worker, &EngineWorker::closeModel, Qt::QueuedConnection);
    }
    m_loadProgress = 0;
    Q_EMIT loadProgressChanged();
    setState(Loading);
    m_remote->open(endpoint, remotestore::loadKey(endpoint.id));
}

bool EngineController::supersededByRemote(const QString &path) const
{
    return m_remote->isActive() && !remoteendpoint::isRemotePath(path);
}
