#pragma once

#include "mcp/mcpreply.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

class McpTransport;
class QTimer;

// An MCP client over any transport, asynchronous throughout so that the GUI thread never
// waits: connectToServer() runs the initialize handshake (initialize, then the
// notifications/initialized notification); listTools() and callTool() return an McpReply
// that finishes once. Requests made while the handshake runs wait for it and are sent after;
// every request has a time limit; when the server fails, exits or garbles its output every
// waiting request finishes with an error saying so: none is left hanging.
class McpClient : public QObject
{
    Q_OBJECT
public:
    enum class State { Disconnected, Connecting, Ready, Closed };
    Q_ENUM(State)

    static constexpr const char *kProtocolVersion = "2025-06-18";

    // Takes ownership of the transport.
    explicit McpClient(McpTransport *transport, QObject *parent = nullptr);
    ~McpClient() override;

    void setRequestTimeout(int ms) { m_timeoutMs = ms; }
    int requestTimeout() const { return m_timeoutMs; }
    State state() const { return m_state; }
    McpTransport *transport() const { return m_transport; }
    // From the initialize result: {name, version} and the version both sides speak.
    QJsonObject serverInfo() const { return m_serverInfo; }
    QString protocolVersion() const { return m_protocolVersion; }

    void connectToServer();
    void disconnectFromServer();

    McpReply *listTools(const QString &cursor = {});
    McpReply *callTool(const QString &name, const QJsonObject &arguments);
    // Any request by method name; the replies above go through it.
    McpReply *request(const QString &method, const QJsonObject &params);

signals:
    void ready();
    // The handshake failed or the connection ended; reason says which and why.
    void failed(const QString &reason);

private:
    struct Pending
    {
        QPointer<McpReply> reply;
        QTimer *timer = nullptr;
    };
    struct Queued
    {
        QPointer<McpReply> reply;
        QJsonObject params;
    };

    void sendNow(McpReply *reply, const QJsonObject &params);
    void onStarted();
    void onMessage(const QJsonObject &message);
    void onServerRequest(const QJsonObject &message);
    void onSendFailed(const QJsonValue &id, const QString &reason);
    void onMalformed(const QString &reason);
    void onClosed(const QString &reason);
    void onTimeout(qint64 id);
    void failLater(McpReply *reply, McpReply::Error error, const QString &message);
    void failAll(McpReply::Error error, const QString &message, bool queuedToo);
    void handshakeFailed(const QString &reason);
    Pending take(qint64 id);

    McpTransport *m_transport;
    State m_state = State::Disconnected;
    int m_timeoutMs = 30000;
    qint64 m_nextId = 1;
    QHash<qint64, Pending> m_pending;
    QList<Queued> m_queued; // made during the handshake, sent once it succeeds
    QPointer<McpReply> m_initialize;
    QJsonObject m_serverInfo;
    QString m_protocolVersion;
};
