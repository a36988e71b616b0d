#include "server/remoteforward.h"

#include "remote/remotehttp.h"
#include "server/apierror.h"
#include "server/httpexchange.h"

#include <QJsonDocument>
#include <QNetworkReply>

RemoteForward::RemoteForward(QObject *parent) : QObject(parent)
{
}

void RemoteForward::setLimits(int maxConcurrent, int maxQueued)
{
    m_maxConcurrent = qMax(1, maxConcurrent);
    m_maxQueued = qMax(0, maxQueued);
    startWaiting(); // a raised limit lets waiting requests go now
}

void RemoteForward::forward(const std::shared_ptr<HttpExchange> &ex, const QString &route, const QByteArray &body,
                            const RemoteEndpoint &endpoint, const QString &apiKey, std::function<void()> done)
{
    QJsonParseError parseError;
    QJsonObject request = QJsonDocument::fromJson(body, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        const ApiError e = ApiError::malformedJson(parseError.errorString());
        ex->sendJson(e.status, e.toJson());
        done();
        return;
    }
    // Clients name the model this server lists; the remote server knows it by its own id.
    request.insert(QStringLiteral("model"), endpoint.model);
    Pending p{ex, route, QJsonDocument(request).toJson(QJsonDocument::Compact), endpoint, apiKey, std::move(done)};
    if (m_running < m_maxConcurrent)
        return start(std::move(p));
    if (queued() >= m_maxQueued) {
        const ApiError e = ApiError::remoteBusy(m_running, queued());
        ex->sendJson(e.status, e.toJson(), e.headers);
        p.done();
        return;
    }
    // A client that leaves while it waits is dropped from the queue (never sent on).
    if (QTcpSocket *client = ex->socket())
        connect(client, &QTcpSocket::disconnected, this, [this, key = ex.get()] {
            for (auto it = m_queue.begin(); it != m_queue.end(); ++it)
                if (it->ex.get() == key) {
                    const std::function<void()> done = std::move(it->done);
                    m_queue.erase(it);
                    Q_EMIT countsChanged();
                    done();
                    return;
                }
        });
    m_queue.push_back(std::move(p));
    Q_EMIT countsChanged();
}

void RemoteForward::startWaiting()
{
    while (m_running < m_maxConcurrent && !m_queue.empty()) {
        Pending p = std::move(m_queue.front());
        m_queue.pop_front();
        start(std::move(p));
    }
}

void RemoteForward::start(Pending p)
{
    ++m_running;
    Q_EMIT countsChanged();
    const std::shared_ptr<HttpExchange> ex = p.ex;
    const RemoteEndpoint &endpoint = p.endpoint;
    const QString &route = p.route;
    const QString &apiKey = p.apiKey;
    QNetworkRequest req = remotehttp::request(remoteendpoint::routeUrl(endpoint.baseUrl, route), apiKey);
    QNetworkReply *reply = m_net.post(req, p.body);
    if (QTcpSocket *client = ex->socket())
        connect(client, &QTcpSocket::disconnected, reply, &QNetworkReply::abort);

    const QUrl base = endpoint.baseUrl;
    connect(reply, &QNetworkReply::readyRead, this, [reply, ex] {
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray type = reply->header(QNetworkRequest::ContentTypeHeader).toByteArray();
        if (status != 200 || !type.startsWith("text/event-stream"))
            return; // a whole answer: relayed at the end
        if (!ex->streaming())
            ex->beginStream("text/event-stream");
        ex->send(reply->readAll());
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply, ex, base, done = std::move(p.done)] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (ex->streaming()) {
            ex->send(reply->readAll());
            if (reply->error() != QNetworkReply::NoError) {
                // The stream is already under way: its status cannot change, an event says why.
                const QJsonObject e = ApiError::server(remotehttp::failure(reply, base, {})).toJson();
                ex->send("data: " + QJsonDocument(e).toJson(QJsonDocument::Compact) + "\n\n");
            }
            ex->endStream();
        } else if (status == 401 || status == 403) {
            // The client's key was this server's and it was right: the key refused is the one
            // saved for the remote engine, which is this server's failure, not the client's.
            ApiError e = ApiError::server(remotehttp::failure(reply, base, reply->readAll()));
            e.status = 502;
            e.code = QStringLiteral("remote_key_refused");
            ex->sendJson(e.status, e.toJson());
        } else if (status > 0) {
            const QByteArray answer = reply->readAll();
            const QJsonDocument doc = QJsonDocument::fromJson(answer);
            if (doc.isObject()) {
                ex->sendJson(status, doc.object());
            } else {
                ApiError e = ApiError::server(QObject::tr("The remote engine at %1 answered HTTP %2 with a body that is not JSON.")
                                                  .arg(base.toString()).arg(status));
                e.status = 502;
                ex->sendJson(e.status, e.toJson());
            }
        } else {
            ApiError e = ApiError::server(remotehttp::failure(reply, base, {}));
            e.status = 502;
            e.code = QStringLiteral("remote_unreachable");
            ex->sendJson(e.status, e.toJson());
        }
        --m_running;
        Q_EMIT countsChanged();
        done();
        startWaiting();
    });
}
