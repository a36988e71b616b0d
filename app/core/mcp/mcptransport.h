#pragma once

#include <QJsonObject>
#include <QObject>
#include <QString>

// One way of carrying MCP's JSON-RPC messages to a server and back (stdio or streamable
// HTTP). The client above it owns request ids and timeouts; a transport only moves whole
// messages and says when it cannot: that split lets one client speak over either.
class McpTransport : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // Starts the connection; emits started() or closed(reason) later, never blocks.
    virtual void open() = 0;
    // Sends one JSON-RPC message (request or notification).
    virtual void send(const QJsonObject &message) = 0;
    // Ends the connection; emits closed() unless already closed.
    virtual void close() = 0;
    // Set once the initialize handshake agreed on a version (HTTP sends it as a header).
    virtual void setProtocolVersion(const QString &version) { Q_UNUSED(version); }

signals:
    void started();
    void messageReceived(const QJsonObject &message);
    // A message for one request could not be carried (HTTP status, unreadable reply): that
    // request fails, the connection stays. id is the JSON-RPC id of the message sent.
    void sendFailed(const QJsonValue &id, const QString &reason);
    // Bytes that are not a JSON-RPC message arrived where one was due; no request can be
    // told from them, so the client fails every request still waiting.
    void malformed(const QString &reason);
    // The connection is gone (process failed to start or exited, or close()).
    void closed(const QString &reason);
};
