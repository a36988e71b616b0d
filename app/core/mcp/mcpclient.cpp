#include "mcp/mcpclient.h"

#include "mcp/mcptransport.h"

#include <QCoreApplication>
#include <QJsonValue>
#include <QTimer>

namespace {
QJsonObject notification(const QString &method, const QJsonObject &params = {})
{
    QJsonObject m{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")}, {QStringLiteral("method"), method}};
    if (!params.isEmpty())
        m.insert(QStringLiteral("params"), params);
    return m;
}
} // namespace

McpClient::McpClient(McpTransport *transport, QObject *parent) : QObject(parent), m_transport(transport)
{
    m_transport->setParent(this);
    connect(m_transport, &McpTransport::started, this, &McpClient::onStarted);
    connect(m_transport, &McpTransport::messageReceived, this, &McpClient::onMessage);
    connect(m_transport, &McpTransport::sendFailed, this, &McpClient::onSendFailed);
    connect(m_transport, &McpTransport::malformed, this, &McpClient::onMalformed);
    connect(m_transport, &McpTransport::closed, this, &McpClient::onClosed);
}

McpClient::~McpClient()
{
    // Replies are children of the client and die with it; nobody waits on them after this.
    m_transport->disconnect(this);
}

void McpClient::connectToServer()
{
    if (m_state == State::Connecting || m_state == State::Ready)
        return;
    m_state = State::Connecting;
    m_initialize = new McpReply(QStringLiteral("initialize"), this);
    connect(m_initialize, &McpReply::finished, this, [this, reply = m_initialize] {
        reply->deleteLater();
        if (reply->error() != McpReply::Error::None) {
            handshakeFailed(reply->errorString());
            return;
        }
        const QJsonObject result = reply->result();
        m_protocolVersion = result.value(QStringLiteral("protocolVersion")).toString();
        m_serverInfo = result.value(QStringLiteral("serverInfo")).toObject();
        if (m_protocolVersion.isEmpty()) {
            handshakeFailed(QStringLiteral("initialize: the server's answer names no protocolVersion"));
            return;
        }
        m_transport->setProtocolVersion(m_protocolVersion);
        m_transport->send(notification(QStringLiteral("notifications/initialized")));
        m_state = State::Ready;
        const QList<Queued> queued = std::exchange(m_queued, {});
        for (const Queued &q : queued)
            if (q.reply)
                sendNow(q.reply, q.params);
        emit ready();
    });
    m_transport->open();
}

void McpClient::onStarted()
{
    if (!m_initialize)
        return;
    const QJsonObject params{
        {QStringLiteral("protocolVersion"), QString::fromLatin1(kProtocolVersion)},
        {QStringLiteral("capabilities"), QJsonObject{}},
        {QStringLiteral("clientInfo"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("WASTE Studio")},
                     {QStringLiteral("version"), QCoreApplication::applicationVersion()}}}};
    sendNow(m_initialize, params);
}

void McpClient::handshakeFailed(const QString &reason)
{
    m_state = State::Closed;
    failAll(McpReply::Error::ServerUnavailable,
            QStringLiteral("the server did not complete the MCP handshake: ") + reason, true);
    m_transport->close();
    emit failed(reason);
}

void McpClient::disconnectFromServer()
{
    // Asked for, so not a failure: requests still waiting end with "closed", failed() stays quiet.
    m_state = State::Closed;
    m_transport->close();
}

McpReply *McpClient::listTools(const QString &cursor)
{
    QJsonObject params;
    if (!cursor.isEmpty())
        params.insert(QStringLiteral("cursor"), cursor);
    return request(QStringLiteral("tools/list"), params);
}

McpReply *McpClient::callTool(const QString &name, const QJsonObject &arguments)
{
    McpReply *reply = request(QStringLiteral("tools/call"),
                              QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("arguments"), arguments}});
    reply->setObjectName(name);
    return reply;
}

McpReply *McpClient::request(const QString &method, const QJsonObject &params)
{
    auto *reply = new McpReply(method, this);
    switch (m_state) {
    case State::Ready:
        sendNow(reply, params);
        break;
    case State::Connecting:
        m_queued.append({reply, params});
        break;
    case State::Disconnected:
    case State::Closed:
        failLater(reply, McpReply::Error::ServerUnavailable,
                  QStringLiteral("not connected to the server"));
        break;
    }
    return reply;
}

void McpClient::sendNow(McpReply *reply, const QJsonObject &params)
{
    const qint64 id = m_nextId++;
    auto *timer = new QTimer(reply);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, id] { onTimeout(id); });
    timer->start(m_timeoutMs);
    m_pending.insert(id, {reply, timer});
    QJsonObject message{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                        {QStringLiteral("id"), id},
                        {QStringLiteral("method"), reply->method()}};
    if (!params.isEmpty() || reply->method() != QLatin1String("tools/list"))
        message.insert(QStringLiteral("params"), params);
    m_transport->send(message);
}

McpClient::Pending McpClient::take(qint64 id)
{
    Pending p = m_pending.take(id);
    if (p.timer)
        p.timer->stop();
    return p;
}

void McpClient::onMessage(const QJsonObject &message)
{
    const QJsonValue id = message.value(QStringLiteral("id"));
    if (message.contains(QStringLiteral("method"))) {
        if (!id.isUndefined() && !id.isNull())
            onServerRequest(message);
        return; // notifications (progress, logging, list changes) are not used yet
    }
    const Pending p = take(id.toInteger(-1));
    if (!p.reply)
        return; // an answer after its timeout: the caller has already been told
    if (message.contains(QStringLiteral("error"))) {
        const QJsonObject e = message.value(QStringLiteral("error")).toObject();
        const int code = e.value(QStringLiteral("code")).toInt();
        p.reply->finishWithError(McpReply::Error::Rpc,
                                 QStringLiteral("the server answered with error %1: %2")
                                     .arg(code).arg(e.value(QStringLiteral("message")).toString()),
                                 code);
    } else if (message.value(QStringLiteral("result")).isObject()) {
        p.reply->finishWithResult(message.value(QStringLiteral("result")).toObject());
    } else {
        p.reply->finishWithError(McpReply::Error::Malformed,
                                 QStringLiteral("the server's answer has neither a result object nor an error"));
    }
}

void McpClient::onServerRequest(const QJsonObject &message)
{
    // The server may ping; anything else it asks for (sampling, roots, elicitation) this
    // client did not declare, so it answers "method not found" rather than leave it waiting.
    QJsonObject answer{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                       {QStringLiteral("id"), message.value(QStringLiteral("id"))}};
    if (message.value(QStringLiteral("method")).toString() == QLatin1String("ping"))
        answer.insert(QStringLiteral("result"), QJsonObject{});
    else
        answer.insert(QStringLiteral("error"),
                      QJsonObject{{QStringLiteral("code"), -32601},
                                  {QStringLiteral("message"), QStringLiteral("method not supported by this client")}});
    m_transport->send(answer);
}

void McpClient::onSendFailed(const QJsonValue &id, const QString &reason)
{
    const Pending p = take(id.toInteger(-1));
    if (p.reply)
        p.reply->finishWithError(McpReply::Error::Transport, reason);
}

void McpClient::onMalformed(const QString &reason)
{
    failAll(McpReply::Error::Malformed, reason, false);
}

void McpClient::onClosed(const QString &reason)
{
    const State before = m_state;
    m_state = State::Closed;
    failAll(McpReply::Error::ServerUnavailable, reason, true);
    // A server that never started has not been sent initialize yet; failing it here is what
    // reports the failed handshake (failed() is emitted there, once).
    if (m_initialize && !m_initialize->isFinished())
        m_initialize->finishWithError(McpReply::Error::ServerUnavailable, reason);
    if (before == State::Ready)
        emit failed(reason);
}

void McpClient::onTimeout(qint64 id)
{
    const Pending p = take(id);
    if (!p.reply)
        return;
    // Tell the server to stop working on it, the spec's way to abandon a request (except
    // initialize, which the spec says must not be cancelled).
    if (p.reply->method() != QLatin1String("initialize"))
        m_transport->send(notification(QStringLiteral("notifications/cancelled"),
                                       QJsonObject{{QStringLiteral("requestId"), id},
                                                   {QStringLiteral("reason"), QStringLiteral("timed out")}}));
    p.reply->finishWithError(McpReply::Error::Timeout,
                             QStringLiteral("the server did not answer within %1 ms").arg(m_timeoutMs));
}

void McpClient::failLater(McpReply *reply, McpReply::Error error, const QString &message)
{
    // Finished after the caller has had the chance to connect to finished().
    QTimer::singleShot(0, reply, [reply, error, message] { reply->finishWithError(error, message); });
}

void McpClient::failAll(McpReply::Error error, const QString &message, bool queuedToo)
{
    const QHash<qint64, Pending> pending = std::exchange(m_pending, {});
    for (const Pending &p : pending) {
        if (p.timer)
            p.timer->stop();
        if (p.reply)
            p.reply->finishWithError(error, message);
    }
    if (!queuedToo)
        return;
    const QList<Queued> queued = std::exchange(m_queued, {});
    for (const Queued &q : queued)
        if (q.reply)
            q.reply->finishWithError(error, message);
}
