#pragma once

#include "mcp/mcptransport.h"

#include <QHash>
#include <QJsonValue>
#include <QNetworkAccessManager>
#include <QUrl>

class QNetworkReply;

// MCP's streamable-HTTP transport: every message is a POST to the one endpoint, accepting
// application/json or text/event-stream; the answer comes back as one JSON body or as SSE
// events on that POST's reply. The Mcp-Session-Id the server gives at initialize is sent on
// every later request and ended with a DELETE on close.
class McpHttpTransport : public McpTransport
{
    Q_OBJECT
public:
    explicit McpHttpTransport(QUrl endpoint, QObject *parent = nullptr);
    ~McpHttpTransport() override;

    void open() override;
    void send(const QJsonObject &message) override;
    void close() override;
    void setProtocolVersion(const QString &version) override { m_protocolVersion = version; }

    QString sessionId() const { return m_sessionId; }

private:
    struct InFlight
    {
        QJsonValue id;        // undefined for a notification or an answer to the server
        QByteArray buffer;    // SSE bytes not yet ending an event
        bool answered = false;
    };

    void onReadyRead(QNetworkReply *reply);
    void onFinished(QNetworkReply *reply);
    void takeEvents(InFlight &f, bool atEnd);
    void deliver(InFlight &f, const QByteArray &json, const QString &where);
    static bool isEventStream(QNetworkReply *reply);

    QUrl m_endpoint;
    QNetworkAccessManager m_network;
    QHash<QNetworkReply *, InFlight> m_inFlight;
    QString m_sessionId;
    QString m_protocolVersion;
    bool m_open = false;
};
