// ApiServer's remote part: while the open model is a remote engine, completions are passed
// on to it (server/remoteforward.h) instead of the local engine, and logged like the rest.
#include "server/apiserver.h"

#include "engine/enginecontroller.h"
#include "remote/remoteengine.h"
#include "server/apierror.h"
#include "server/httpexchange.h"
#include "server/remoteforward.h"

void ApiServer::forwardToRemote(const std::shared_ptr<HttpExchange> &ex, const QString &route, const QByteArray &body,
                                quint64 logKey, QElapsedTimer clock)
{
    if (!m_forward)
        m_forward = new RemoteForward(this);
    m_forward->setLimits(m_remoteMaxConcurrent, m_maxQueued);
    const RemoteEngine *remote = m_engine->remoteEngine();
    m_forward->forward(ex, route, body, remote->endpoint(), remote->apiKey(),
                       [this, ex, logKey, clock] { finishLog(logKey, *ex, 0, clock); });
}

ApiError ApiServer::notForwarded(const QString &path)
{
    ApiError e;
    e.status = 501;
    e.type = QStringLiteral("server_error");
    e.code = QStringLiteral("remote_engine");
    e.message = tr("The open model runs on a remote engine, and this server passes only Chat Completions "
                   "(/v1/chat/completions) and Completions (/v1/completions) on to it, not %1. Use Chat "
                   "Completions, or open a local model.").arg(path);
    return e;
}
