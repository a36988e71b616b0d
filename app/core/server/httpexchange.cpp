#include "server/httpexchange.h"

#include "server/openaijson.h"

#include <QJsonDocument>

namespace {
QHttpServerResponder::StatusCode code(int status)
{
    return static_cast<QHttpServerResponder::StatusCode>(status);
}
} // namespace

HttpExchange::HttpExchange(QHttpServerResponder &&responder, Headers extraHeaders)
    : m_responder(std::move(responder)), m_socket(m_responder.socket()), m_extra(std::move(extraHeaders))
{
}

bool HttpExchange::isOpen() const
{
    return !m_answered && m_socket && m_socket->state() == QAbstractSocket::ConnectedState;
}

void HttpExchange::sendJson(int status, const QJsonObject &body, const Headers &extra)
{
    if (m_streaming)
        return;
    m_status = status;
    if (!isOpen()) {
        m_answered = true;
        return;
    }
    Headers headers = m_extra;
    headers += extra;
    headers.append(qMakePair(QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")));
    writeComplete(status, headers, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

void HttpExchange::sendEmpty(int status, const Headers &headers)
{
    if (m_streaming)
        return;
    m_status = status;
    if (!isOpen()) {
        m_answered = true;
        return;
    }
    Headers all = m_extra;
    all += headers;
    writeComplete(status, all, QByteArray());
}

// QHttpServerResponder::write() takes only an initializer_list of headers, so the
// answer is written piece by piece: status line, headers, Content-Length, body.
void HttpExchange::writeComplete(int status, const Headers &headers, const QByteArray &body)
{
    m_responder.writeStatusLine(code(status));
    writeHeaders(headers);
    m_responder.writeHeader(QByteArrayLiteral("Content-Length"), QByteArray::number(body.size()));
    m_responder.writeBody(body);
    m_answered = true;
    m_socket->flush();
    closeIfAsked();
}

void HttpExchange::writeHeaders(const Headers &headers)
{
    for (const auto &h : headers)
        m_responder.writeHeader(h.first, h.second);
    if (m_close)
        m_responder.writeHeader(QByteArrayLiteral("Connection"), QByteArrayLiteral("close"));
}

void HttpExchange::closeIfAsked()
{
    // disconnectFromHost writes what is still buffered first. Qt deletes the socket, and
    // with it the request and its body, once it is closed.
    if (m_close && m_socket)
        m_socket->disconnectFromHost();
}

void HttpExchange::beginStream(const QByteArray &contentType)
{
    if (m_streaming || m_answered)
        return;
    m_streaming = true;
    m_status = 200;
    m_sinceSent.start();
    if (!isOpen())
        return;
    m_responder.writeStatusLine(QHttpServerResponder::StatusCode::Ok);
    Headers headers = m_extra;
    headers.append(qMakePair(QByteArrayLiteral("Content-Type"), contentType));
    headers.append(qMakePair(QByteArrayLiteral("Cache-Control"), QByteArrayLiteral("no-cache")));
    headers.append(qMakePair(QByteArrayLiteral("X-Accel-Buffering"), QByteArrayLiteral("no")));
    headers.append(qMakePair(QByteArrayLiteral("Transfer-Encoding"), QByteArrayLiteral("chunked")));
    writeHeaders(headers);
    m_responder.writeBody(QByteArray()); // ends the header block
    m_socket->flush();
}

void HttpExchange::send(const QByteArray &payload)
{
    if (!m_streaming || payload.isEmpty() || !isOpen())
        return;
    m_responder.writeBody(openai::httpChunk(payload));
    m_socket->flush();
    m_sinceSent.start();
}

void HttpExchange::endStream()
{
    if (!m_streaming || m_answered)
        return;
    if (isOpen()) {
        m_responder.writeBody(openai::httpChunk(QByteArray()));
        m_socket->flush();
        closeIfAsked();
    }
    m_answered = true;
}
