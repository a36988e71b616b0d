#include "download/hubrequest.h"

#include <QCoreApplication>

namespace hubrequest {

QNetworkRequest make(const QUrl &url, const HubEndpoint &endpoint)
{
    QNetworkRequest req(url);
    req.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    req.setAttribute(QNetworkRequest::Http2AllowedAttribute, true);
    req.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
    req.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    req.setRawHeader("Accept-Encoding", "identity");
    req.setHeader(QNetworkRequest::UserAgentHeader,
                  QStringLiteral("waste-studio/%1").arg(QCoreApplication::applicationVersion().isEmpty()
                                                             ? QStringLiteral("0")
                                                             : QCoreApplication::applicationVersion()));
    if (endpoint.mayCarryToken(url))
        req.setRawHeader("Authorization", "Bearer " + endpoint.token().toUtf8());
    return req;
}

QUrl redirectTarget(QNetworkReply *reply, QString *why)
{
    const QByteArray loc = reply->rawHeader("Location");
    if (loc.isEmpty()) {
        *why = QStringLiteral("a redirect without a Location");
        return {};
    }
    const QUrl target = reply->url().resolved(QUrl::fromEncoded(loc));
    if (!target.isValid()) {
        *why = QStringLiteral("a redirect to an invalid address");
        return {};
    }
    if (reply->url().scheme() == QLatin1String("https") && target.scheme() != QLatin1String("https")) {
        *why = QStringLiteral("a redirect from https to %1, refused").arg(target.scheme());
        return {};
    }
    return target;
}

QString describeError(QNetworkReply *reply)
{
    switch (reply->error()) {
    case QNetworkReply::NoError: return {};
    case QNetworkReply::RemoteHostClosedError: return QStringLiteral("the connection was cut");
    case QNetworkReply::ConnectionRefusedError: return QStringLiteral("the server refused the connection");
    case QNetworkReply::HostNotFoundError: return QStringLiteral("host %1 not found").arg(reply->url().host());
    case QNetworkReply::TimeoutError: return QStringLiteral("the connection timed out");
    case QNetworkReply::SslHandshakeFailedError:
        return QStringLiteral("the TLS certificate of %1 could not be verified (%2)").arg(reply->url().host(), reply->errorString());
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError: return QStringLiteral("the network is down");
    default: break;
    }
    return reply->errorString();
}

} // namespace hubrequest
