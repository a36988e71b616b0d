// One HTTP request/response on the API server. It owns the QHttpServerResponder (moved
// out of the route handler, so the answer can come later from engine signals) and guards
// every write with a QPointer to the socket: once the client has gone, writes are dropped.
// Qt 6.4 has no streaming response, so a stream is HTTP/1.1 chunked encoding written by
// hand through the responder.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QHttpServerResponder>
#include <QJsonObject>
#include <QPointer>
#include <QTcpSocket>

class HttpExchange {
public:
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    HttpExchange(QHttpServerResponder &&responder, Headers extraHeaders);

    QTcpSocket *socket() const { return m_socket.data(); }
    // The client is still connected and no complete answer has been sent.
    bool isOpen() const;
    bool answered() const { return m_answered; }
    bool streaming() const { return m_streaming; }
    int status() const { return m_status; }

    // The connection closes once the answer is written ("Connection: close"). Qt 6.4 keeps a
    // request's body until the next request on its connection, so an idle keep-alive
    // connection would hold its last large body for as long as the client keeps it open.
    void closeWhenAnswered() { m_close = true; }

    // A complete answer with Content-Length.
    void sendJson(int status, const QJsonObject &body, const Headers &headers = {});
    void sendEmpty(int status, const Headers &headers = {});

    // Streaming: status line and headers, then one chunk per send(), then the last chunk.
    void beginStream(const QByteArray &contentType);
    void send(const QByteArray &payload);
    void endStream();
    // Milliseconds since the stream's last write (its headers or a chunk); -1 when not streaming.
    qint64 msSinceSent() const { return m_streaming && m_sinceSent.isValid() ? m_sinceSent.elapsed() : -1; }

private:
    void writeComplete(int status, const Headers &headers, const QByteArray &body);
    void writeHeaders(const Headers &headers);
    void closeIfAsked();

    QHttpServerResponder m_responder;
    QPointer<QTcpSocket> m_socket;
    Headers m_extra;
    bool m_answered = false;
    bool m_streaming = false;
    bool m_close = false;
    int m_status = 0;
    QElapsedTimer m_sinceSent;
};
