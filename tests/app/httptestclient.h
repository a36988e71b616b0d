// A real HTTP client for the API server tests (QNetworkAccessManager): blocking helpers
// that spin the event loop, and an SSE reader that collects "data:" events as they arrive.
#pragma once

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTest>
#include <QTimer>

struct HttpResult {
    int status = 0;
    QByteArray body;
    QList<QNetworkReply::RawHeaderPair> headers;
    QNetworkReply::NetworkError error = QNetworkReply::NoError;

    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    QByteArray header(const QByteArray &name) const
    {
        for (const auto &h : headers)
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return h.second;
        return {};
    }
    bool hasHeader(const QByteArray &name) const
    {
        for (const auto &h : headers)
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return true;
        return false;
    }
    // The OpenAI error object's fields.
    QString errorMessage() const { return json().value("error").toObject().value("message").toString(); }
    QString errorParam() const { return json().value("error").toObject().value("param").toString(); }
    QString errorType() const { return json().value("error").toObject().value("type").toString(); }
};

class HttpTestClient {
public:
    explicit HttpTestClient(int port) : m_base(QStringLiteral("http://127.0.0.1:%1").arg(port)) {}

    QNetworkRequest request(const QString &path, const QList<QPair<QByteArray, QByteArray>> &headers = {}) const
    {
        QNetworkRequest r(QUrl(m_base + path));
        r.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        for (const auto &h : headers)
            r.setRawHeader(h.first, h.second);
        return r;
    }

    QNetworkReply *start(const QByteArray &verb, const QString &path, const QByteArray &body = {},
                         const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        const QNetworkRequest r = request(path, headers);
        if (verb == "GET")
            return m_nam.get(r);
        if (verb == "POST")
            return m_nam.post(r, body);
        return m_nam.sendCustomRequest(r, verb, body);
    }

    static HttpResult wait(QNetworkReply *reply, int timeoutMs = 60000)
    {
        if (!reply->isFinished()) {
            QEventLoop loop;
            QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
            loop.exec();
        }
        HttpResult r;
        r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        r.body = reply->isOpen() ? reply->readAll() : QByteArray();
        r.headers = reply->rawHeaderPairs();
        r.error = reply->error();
        reply->deleteLater();
        return r;
    }

    HttpResult call(const QByteArray &verb, const QString &path, const QByteArray &body = {},
                    const QList<QPair<QByteArray, QByteArray>> &headers = {}, int timeoutMs = 60000)
    {
        return wait(start(verb, path, body, headers), timeoutMs);
    }
    HttpResult get(const QString &path, const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        return call("GET", path, {}, headers);
    }
    HttpResult post(const QString &path, const QJsonObject &body,
                    const QList<QPair<QByteArray, QByteArray>> &headers = {}, int timeoutMs = 60000)
    {
        return call("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact), headers, timeoutMs);
    }

    QNetworkAccessManager &nam() { return m_nam; }

private:
    QString m_base;
    QNetworkAccessManager m_nam;
};

// Splits a Server-Sent Events body into its "data:" payloads (one per event); comments are skipped.
inline QList<QByteArray> sseData(const QByteArray &body, bool *wellFramed = nullptr)
{
    QList<QByteArray> out;
    bool ok = true;
    const QList<QByteArray> events = body.split('\n');
    QByteArray current;
    for (const QByteArray &line : events) {
        if (line.isEmpty()) {
            if (!current.isNull()) {
                out << current;
                current = QByteArray();
            }
            continue;
        }
        if (line.startsWith(':'))
            continue; // a comment (the server's keep-alive while it reads a long prompt)
        if (!line.startsWith("data: "))
            ok = false;
        current = line.mid(6);
    }
    if (!current.isNull())
        ok = false; // an event without its terminating blank line
    if (wellFramed)
        *wellFramed = ok;
    return out;
}
