#include "download/hubendpoint.h"

#include <QHostAddress>
#include <QRegularExpression>
#include <stdexcept>

namespace {
// Percent-encodes one path segment (keeps unreserved characters only).
QString encodeSegment(const QString &s)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(s));
}

QString encodePath(const QString &path)
{
    QStringList parts = path.split(QLatin1Char('/'));
    for (QString &p : parts)
        p = encodeSegment(p);
    return parts.join(QLatin1Char('/'));
}

bool isLoopback(const QString &host)
{
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress a(host);
    return !a.isNull() && a.isLoopback();
}
} // namespace

HubEndpoint::HubEndpoint(const QString &endpoint, const QString &token) : m_token(token.trimmed())
{
    QString e = endpoint.trimmed();
    while (e.endsWith(QLatin1Char('/')))
        e.chop(1);
    m_base = QUrl(e, QUrl::StrictMode);
    const QString scheme = m_base.scheme().toLower();
    if (!m_base.isValid() || m_base.host().isEmpty() || (scheme != QLatin1String("https") && scheme != QLatin1String("http")))
        throw std::invalid_argument("the hub endpoint '" + e.toStdString()
                                    + "' is not an http(s) URL; use e.g. https://huggingface.co");
    if (m_base.hasQuery() || m_base.hasFragment())
        throw std::invalid_argument("the hub endpoint '" + e.toStdString() + "' must not have a query or fragment");
}

QString HubEndpoint::resolve(const QString &explicitValue)
{
    if (!explicitValue.trimmed().isEmpty())
        return explicitValue.trimmed();
    const QString env = qEnvironmentVariable("HF_ENDPOINT").trimmed();
    return env.isEmpty() ? defaultEndpoint() : env;
}

QString HubEndpoint::resolveToken(const QString &fallback)
{
    const QString env = qEnvironmentVariable("HF_TOKEN").trimmed();
    return env.isEmpty() ? fallback.trimmed() : env;
}

QString HubEndpoint::joinPath(const QString &tail) const
{
    return m_base.toString(QUrl::FullyEncoded) + QLatin1Char('/') + tail;
}

QUrl HubEndpoint::treeUrl(const QString &repo, const QString &revision) const
{
    // The revision may itself contain '/' (refs/pr/1), so it is one encoded segment.
    return QUrl(joinPath(QStringLiteral("api/models/%1/tree/%2?recursive=1").arg(encodePath(repo), encodeSegment(revision))),
                QUrl::StrictMode);
}

QUrl HubEndpoint::fileUrl(const QString &repo, const QString &revision, const QString &path) const
{
    return QUrl(joinPath(QStringLiteral("%1/resolve/%2/%3").arg(encodePath(repo), encodeSegment(revision), encodePath(path))),
                QUrl::StrictMode);
}

bool HubEndpoint::mayCarryToken(const QUrl &url) const
{
    if (m_token.isEmpty())
        return false;
    const QString scheme = url.scheme().toLower();
    if (scheme != m_base.scheme().toLower())
        return false;
    if (url.host().compare(m_base.host(), Qt::CaseInsensitive) != 0)
        return false;
    const int defPort = scheme == QLatin1String("https") ? 443 : 80;
    if (url.port(defPort) != m_base.port(defPort))
        return false;
    return scheme == QLatin1String("https") || isLoopback(url.host());
}

QString HubEndpoint::normalizeRepo(const QString &text)
{
    QString t = text.trimmed();
    static const QRegularExpression urlPrefix(QStringLiteral("^https?://[^/]+/"), QRegularExpression::CaseInsensitiveOption);
    const bool wasUrl = urlPrefix.match(t).hasMatch();
    t.remove(urlPrefix);
    QStringList parts = t.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (wasUrl && !parts.isEmpty() && parts.first() == QLatin1String("models"))
        parts.removeFirst();
    if (parts.size() < 2 || (!wasUrl && parts.size() != 2))
        return {};
    static const QRegularExpression part(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]*$"));
    if (!part.match(parts[0]).hasMatch() || !part.match(parts[1]).hasMatch() || parts[1].contains(QLatin1String("..")))
        return {};
    return parts[0] + QLatin1Char('/') + parts[1];
}

QString HubEndpoint::folderName(const QString &repo)
{
    QString f = repo;
    f.replace(QLatin1Char('/'), QLatin1String("--"));
    return f;
}
