#include "mcp/mcphttptransport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

namespace {
const QByteArray kSessionHeader = QByteArrayLiteral("Mcp-Session-Id");
const QByteArray kVersionHeader = QByteArrayLiteral("MCP-Protocol-Version");
} // namespace

McpHttpTransport::McpHttpTransport(QUrl endpoint, QObject *parent)
    : McpTransport(parent), m_endpoint(std::move(endpoint))
{
}

McpHttpTransport::~McpHttpTransport()
{
    for (auto it = m_inFlight.cbegin(); it != m_inFlight.cend(); ++it) {
        it.key()->disconnect(this);
        it.key()->abort();
    }
}

void McpHttpTransport::open()
{
    // Nothing to connect before the first POST; started() still comes later, as with stdio.
    m_open = true;
    m_sessionId.clear();
    QTimer::singleShot(0, this, [this] {
        if (m_open)
            emit started();
    });
}

void McpHttpTransport::send(const QJsonObject &message)
{
    if (!m_open)
        return;
    QNetworkRequest request(m_endpoint);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("Accept", "application/json, text/event-stream");
    if (!m_sessionId.isEmpty())
        request.setRawHeader(kSessionHeader, m_sessionId.toUtf8());
    if (!m_protocolVersion.isEmpty())
        request.setRawHeader(kVersionHeader, m_protocolVersion.toUtf8());
    // The client's own time limit decides; a transfer timeout here would only race it.
    request.setTransferTimeout(0);

    QNetworkReply *reply = m_network.post(request, QJsonDocument(message).toJson(QJsonDocument::Compact));
    InFlight f;
    if (message.contains(QStringLiteral("method")))
        f.id = message.value(QStringLiteral("id")); // requests only: answers carry no method
    m_inFlight.insert(reply, f);
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] { onReadyRead(reply); });
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onFinished(reply); });
}

void McpHttpTransport::close()
{
    if (!m_open)
        return;
    m_open = false;
    for (auto it = m_inFlight.cbegin(); it != m_inFlight.cend(); ++it) {
        it.key()->disconnect(this);
        it.key()->abort();
        it.key()->deleteLater();
    }
    m_inFlight.clear();
    if (!m_sessionId.isEmpty()) {
        // The spec's way to end a session; its answer does not matter (405 is allowed).
        QNetworkRequest request(m_endpoint);
        request.setRawHeader(kSessionHeader, m_sessionId.toUtf8());
        QNetworkReply *bye = m_network.deleteResource(request);
        connect(bye, &QNetworkReply::finished, bye, &QObject::deleteLater);
    }
    emit closed(QStringLiteral("the connection to the server was closed"));
}

bool McpHttpTransport::isEventStream(QNetworkReply *reply)
{
    return reply->header(QNetworkRequest::ContentTypeHeader).toString().startsWith(QLatin1String("text/event-stream"));
}

void McpHttpTransport::onReadyRead(QNetworkReply *reply)
{
    auto it = m_inFlight.find(reply);
    if (it == m_inFlight.end() || !isEventStream(reply))
        return; // a JSON body is read whole once finished
    if (reply->hasRawHeader(kSessionHeader))
        m_sessionId = QString::fromUtf8(reply->rawHeader(kSessionHeader));
    it->buffer.append(reply->readAll());
    takeEvents(*it, false);
}

void McpHttpTransport::takeEvents(InFlight &f, bool atEnd)
{
    f.buffer.replace("\r\n", "\n");
    for (;;) {
        qsizetype end = f.buffer.indexOf("\n\n");
        if (end < 0) {
            if (!atEnd || f.buffer.trimmed().isEmpty())
                return;
            end = f.buffer.size();
        }
        const QByteArray event = f.buffer.left(end);
        f.buffer.remove(0, qMin(end + 2, f.buffer.size()));
        // An event's data is its data: lines joined by newlines; id:, event:, retry: and
        // comments carry nothing this client uses.
        QByteArrayList data;
        for (const QByteArray &line : event.split('\n')) {
            if (line.startsWith("data:")) {
                QByteArray d = line.mid(5);
                if (d.startsWith(' '))
                    d.remove(0, 1);
                data.append(d);
            }
        }
        if (!data.isEmpty() && !data.join('\n').trimmed().isEmpty())
            deliver(f, data.join('\n'), QStringLiteral("an event of the server's stream"));
    }
}

void McpHttpTransport::deliver(InFlight &f, const QByteArray &json, const QString &where)
{
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    QJsonArray messages;
    if (doc.isObject())
        messages.append(doc.object());
    else if (doc.isArray())
        messages = doc.array(); // a JSON-RPC batch
    if (err.error != QJsonParseError::NoError || messages.isEmpty()) {
        const QString reason = QStringLiteral("%1 is not a JSON-RPC message (%2): %3")
                                   .arg(where,
                                        err.error != QJsonParseError::NoError ? err.errorString()
                                                                              : QStringLiteral("not an object"),
                                        QString::fromUtf8(json.left(200)));
        if (!f.id.isUndefined() && !f.answered) {
            f.answered = true;
            emit sendFailed(f.id, reason);
        } else {
            emit malformed(reason);
        }
        return;
    }
    for (const QJsonValue &m : messages) {
        const QJsonObject o = m.toObject();
        if (!f.id.isUndefined() && o.value(QStringLiteral("id")) == f.id && !o.contains(QStringLiteral("method")))
            f.answered = true;
        emit messageReceived(o);
    }
}

void McpHttpTransport::onFinished(QNetworkReply *reply)
{
    reply->deleteLater();
    if (!m_inFlight.contains(reply))
        return;
    InFlight f = m_inFlight.take(reply);
    if (reply->hasRawHeader(kSessionHeader))
        m_sessionId = QString::fromUtf8(reply->rawHeader(kSessionHeader));
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();

    if (reply->error() != QNetworkReply::NoError && status == 0) {
        if (!f.id.isUndefined())
            emit sendFailed(f.id, QStringLiteral("the server at %1 cannot be reached: %2")
                                      .arg(m_endpoint.toString(), reply->errorString()));
        return;
    }
    if (status >= 400) {
        if (f.id.isUndefined())
            return; // a refused notification leaves no one waiting
        QString reason = QStringLiteral("the server at %1 answered HTTP %2: %3")
                             .arg(m_endpoint.toString())
                             .arg(status)
                             .arg(QString::fromUtf8(reply->readAll().left(300)).trimmed());
        if (status == 404 && !m_sessionId.isEmpty())
            reason += QStringLiteral(" (the server has ended the session)");
        emit sendFailed(f.id, reason);
        return;
    }
    if (isEventStream(reply)) {
        f.buffer.append(reply->readAll());
        takeEvents(f, true);
    } else {
        const QByteArray body = reply->readAll();
        if (!body.trimmed().isEmpty())
            deliver(f, body, QStringLiteral("the server's answer"));
    }
    if (!f.id.isUndefined() && !f.answered)
        emit sendFailed(f.id, QStringLiteral("the server's reply ended without an answer to the request"));
}
