#include "remote/remotehttp.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>

namespace remotehttp {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("RemoteEngine", text);
}

QString where(const QUrl &base)
{
    return base.toString(QUrl::RemoveUserInfo);
}

// The "message" of an OpenAI error body ({"error":{"message":...}}), of a FastAPI-style
// {"detail": ...} or of a {"message": ...}; "" when the body says nothing readable.
QString serverMessage(const QByteArray &body)
{
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    const QJsonValue error = o.value(QStringLiteral("error"));
    if (error.isObject())
        return error.toObject().value(QStringLiteral("message")).toString();
    if (error.isString())
        return error.toString();
    if (o.value(QStringLiteral("detail")).isString())
        return o.value(QStringLiteral("detail")).toString();
    return o.value(QStringLiteral("message")).toString();
}

} // namespace

QNetworkRequest request(const QUrl &url, const QString &apiKey)
{
    QNetworkRequest r(url);
    r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (!apiKey.isEmpty())
        r.setRawHeader("Authorization", "Bearer " + apiKey.toUtf8());
    r.setTransferTimeout(kTransferTimeoutMs);
    // Streams are read as HTTP/1.1 chunks, which is what every OpenAI-compatible server sends.
    r.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    // A redirect would carry the key to another host: refuse rather than follow.
    r.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    return r;
}

ModelList readModels(QNetworkReply *reply, const QUrl &base)
{
    ModelList out;
    const QByteArray body = reply->readAll();
    out.error = failure(reply, base, body);
    if (!out.error.isEmpty())
        return out;
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    const QJsonValue data = doc.object().value(QStringLiteral("data"));
    if (!data.isArray()) {
        out.error = tr("%1 answered, but not with a model list: is this the base URL of an OpenAI-compatible "
                       "server (it usually ends in /v1)?").arg(where(base));
        return out;
    }
    for (const QJsonValue &m : data.toArray())
        if (const QString id = m.toObject().value(QStringLiteral("id")).toString(); !id.isEmpty())
            out.ids << id;
    if (out.ids.isEmpty())
        out.error = tr("%1 serves no model at the moment: load one there, then try again.").arg(where(base));
    return out;
}

QString failure(QNetworkReply *reply, const QUrl &base, const QByteArray &body)
{
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QString said = serverMessage(body);
    const QString saidPart = said.isEmpty() ? QString() : tr(" It said: \"%1\"").arg(said.left(300));
    if (status == 401 || status == 403)
        return tr("%1 refused the API key (HTTP %2). Check the key saved for this engine: remove it and add it "
                  "again with the right key.").arg(where(base)).arg(status) + saidPart;
    if (status == 404)
        return tr("%1 has no such route or model (HTTP 404).").arg(where(base)) + saidPart;
    if (status >= 300 && status < 400)
        return tr("%1 redirects elsewhere (HTTP %2); give the final address as the base URL.").arg(where(base)).arg(status);
    if (status >= 400)
        return tr("%1 answered with an error (HTTP %2).").arg(where(base)).arg(status) + saidPart;
    switch (reply->error()) {
    case QNetworkReply::NoError:
        return {};
    case QNetworkReply::ConnectionRefusedError:
        return tr("Nothing answers at %1 (connection refused): is the server running, and is the port right?")
            .arg(where(base));
    case QNetworkReply::HostNotFoundError:
        return tr("The host %1 is unknown: check the spelling of the base URL, or the network.").arg(base.host());
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError: // the transfer timeout aborts this way
        return tr("%1 did not answer within %2 s: the server may be overloaded or unreachable.")
            .arg(where(base)).arg(kTransferTimeoutMs / 1000);
    case QNetworkReply::RemoteHostClosedError:
        return tr("%1 closed the connection before the answer was complete (the server stopped or crashed?).")
            .arg(where(base));
    case QNetworkReply::SslHandshakeFailedError:
        return tr("The TLS handshake with %1 failed: %2").arg(where(base), reply->errorString());
    default:
        return tr("The exchange with %1 failed: %2").arg(where(base), reply->errorString());
    }
}

QString modelGone(const QString &model, const QUrl &base, const QStringList &listed)
{
    return tr("%1 no longer serves the model \"%2\" (it lists: %3). Add the engine again with one of those models.")
        .arg(where(base), model, listed.isEmpty() ? tr("nothing") : listed.join(QStringLiteral(", ")));
}

} // namespace remotehttp
