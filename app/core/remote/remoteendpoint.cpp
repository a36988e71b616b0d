#include "remote/remoteendpoint.h"

namespace remoteendpoint {

namespace {
const QString kPrefix = QStringLiteral("remote:");
} // namespace

QString pathFor(const QString &id)
{
    return kPrefix + id;
}

QString idOf(const QString &path)
{
    return path.startsWith(kPrefix) ? path.mid(kPrefix.size()) : QString();
}

bool isRemotePath(const QString &path)
{
    return path.startsWith(kPrefix) && path.size() > kPrefix.size();
}

QUrl normaliseBaseUrl(const QString &typed)
{
    QString text = typed.trimmed();
    if (text.isEmpty())
        return {};
    // "gpu-box:8000" is what people paste from a server's log: assume plain HTTP.
    if (!text.contains(QLatin1String("://")))
        text.prepend(QStringLiteral("http://"));
    QUrl url(text, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty()
        || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")))
        return {};
    QString path = url.path();
    while (path.endsWith(QLatin1Char('/')))
        path.chop(1);
    // Servers differ in what they print (with or without /v1); the routes always hang from /v1.
    if (!path.endsWith(QLatin1String("/v1")))
        path += QStringLiteral("/v1");
    url.setPath(path);
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

QUrl routeUrl(const QUrl &base, const QString &route)
{
    QUrl url = base;
    url.setPath(base.path() + (route.startsWith(QLatin1Char('/')) ? route : QLatin1Char('/') + route));
    return url;
}

} // namespace remoteendpoint
