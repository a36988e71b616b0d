#include "download/resumerules.h"

#include <QLocale>
#include <QRegularExpression>
#include <QTimeZone>

namespace resumerules {

std::optional<ContentRange> parseContentRange(const QByteArray &value)
{
    static const QRegularExpression re(QStringLiteral("^\\s*bytes\\s+(?:(\\d{1,18})-(\\d{1,18})|(\\*))/(\\d{1,18}|\\*)\\s*$"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(QString::fromLatin1(value));
    if (!m.hasMatch())
        return std::nullopt;
    ContentRange cr;
    if (m.captured(3).isEmpty()) {
        cr.first = m.captured(1).toLongLong();
        cr.last = m.captured(2).toLongLong();
        if (cr.last < cr.first)
            return std::nullopt;
    }
    if (m.captured(4) != QLatin1String("*"))
        cr.total = m.captured(4).toLongLong();
    if (cr.first < 0 && cr.total < 0)
        return std::nullopt;
    if (cr.total >= 0 && cr.last >= cr.total)
        return std::nullopt;
    return cr;
}

std::optional<qint64> parseRetryAfter(const QByteArray &value, const QDateTime &now)
{
    const QByteArray v = value.trimmed();
    if (v.isEmpty())
        return std::nullopt;
    bool ok = false;
    const qint64 secs = v.toLongLong(&ok);
    if (ok)
        return secs < 0 ? std::nullopt : std::optional<qint64>(qMin<qint64>(secs, 86400) * 1000);
    // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
    QDateTime when = QLocale::c().toDateTime(QString::fromLatin1(v).replace(QLatin1String(" GMT"), QString()),
                                             QStringLiteral("ddd, dd MMM yyyy HH:mm:ss"));
    if (!when.isValid())
        return std::nullopt;
    when.setTimeZone(QTimeZone::utc());
    return qMax<qint64>(0, now.msecsTo(when));
}

bool isStrongEtag(const QByteArray &etag)
{
    const QByteArray e = etag.trimmed();
    return e.size() >= 2 && e.startsWith('"') && e.endsWith('"');
}

Decision classify(const ResponseFacts &r)
{
    const auto lengthIs = [&](qint64 n) {
        if (r.contentLength.isEmpty())
            return true; // chunked or HTTP/2 without a length: the byte count is checked at the end
        bool ok = false;
        return r.contentLength.trimmed().toLongLong(&ok) == n && ok;
    };
    if (r.status >= 300 && r.status < 400 && r.status != 304) {
        if (r.hasLocation)
            return {Verdict::Redirect, {}};
        return {Verdict::RetryLater, QStringLiteral("HTTP %1 without a Location").arg(r.status)};
    }
    switch (r.status) {
    case 200:
        if (!lengthIs(r.expectedSize))
            return {Verdict::RetryLater, QStringLiteral("the server sends %1 bytes but the listing says %2")
                                             .arg(QString::fromLatin1(r.contentLength.trimmed())).arg(r.expectedSize)};
        if (r.offset > 0)
            return {Verdict::FromZero, QStringLiteral("the server ignored the range and sent the whole file; starting it again from zero")};
        return {Verdict::FromZero, {}};
    case 206: {
        const auto cr = parseContentRange(r.contentRange);
        if (!cr || cr->first != r.offset || cr->last != r.expectedSize - 1 || cr->total != r.expectedSize)
            return {Verdict::RestartFresh, QStringLiteral("the server answered a different range (%1) than asked for (bytes %2-); starting from zero")
                                               .arg(QString::fromLatin1(r.contentRange.isEmpty() ? QByteArray("none") : r.contentRange))
                                               .arg(r.offset)};
        if (!r.knownEtag.isEmpty() && !r.etag.isEmpty() && r.etag.trimmed() != r.knownEtag.trimmed())
            return {Verdict::RestartFresh, QStringLiteral("the file changed on the server (ETag %1, was %2); starting from zero")
                                               .arg(QString::fromLatin1(r.etag), QString::fromLatin1(r.knownEtag))};
        if (!lengthIs(r.expectedSize - r.offset))
            return {Verdict::RestartFresh, QStringLiteral("the range's Content-Length does not match its Content-Range; starting from zero")};
        return {Verdict::Append, {}};
    }
    case 416: {
        const auto cr = parseContentRange(r.contentRange);
        if (r.offset == r.expectedSize || (cr && cr->total == r.offset && r.offset == r.expectedSize))
            return {Verdict::Verify, {}};
        return {Verdict::RestartFresh, QStringLiteral("the server refused the range (416); starting from zero")};
    }
    case 401:
        return {Verdict::Fail, QStringLiteral("the hub refused access (401): the repository is gated or private, or the access token is wrong. "
                                              "Accept its terms on the hub and set HF_TOKEN or a token in Settings")};
    case 403:
        return {Verdict::Fail, QStringLiteral("the hub refused access (403): accept the repository's terms on the hub, or check the access token")};
    case 404:
    case 410:
        return {Verdict::Fail, QStringLiteral("the file is not on the hub (HTTP %1): check the repository name and revision").arg(r.status)};
    case 408:
    case 425:
    case 429:
        return {Verdict::RetryLater, r.status == 429 ? QStringLiteral("the hub asks us to slow down (429)")
                                                     : QStringLiteral("HTTP %1").arg(r.status)};
    default:
        break;
    }
    if (r.status >= 500)
        return {Verdict::RetryLater, r.status == 503 ? QStringLiteral("the hub is busy (503)") : QStringLiteral("server error (HTTP %1)").arg(r.status)};
    return {Verdict::Fail, QStringLiteral("unexpected answer HTTP %1").arg(r.status)};
}

qint64 backoffMs(int attempt, int baseMs, int maxMs, std::mt19937_64 &rng)
{
    const int shift = qBound(0, attempt - 1, 30);
    const qint64 ceiling = qMin<qint64>(maxMs, static_cast<qint64>(baseMs) << shift);
    if (ceiling <= 0)
        return 0;
    std::uniform_int_distribution<qint64> d(0, ceiling);
    return d(rng);
}

} // namespace resumerules
