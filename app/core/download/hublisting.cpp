#include "download/hublisting.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <stdexcept>

namespace hublisting {

namespace {
bool isHex(const QString &s, int len)
{
    if (s.size() != len)
        return false;
    for (QChar c : s)
        if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9')) || (c >= QLatin1Char('a') && c <= QLatin1Char('f'))))
            return false;
    return true;
}

[[noreturn]] void bad(const QString &what)
{
    throw std::runtime_error(("the hub's file listing is malformed: " + what).toStdString());
}
} // namespace

bool isSafeRelativePath(const QString &path)
{
    if (path.isEmpty() || path.size() > 1024 || path.startsWith(QLatin1Char('/')))
        return false;
    for (QChar c : path)
        if (c.unicode() < 0x20 || c == QLatin1Char('\\') || c == QLatin1Char(':') || c.unicode() == 0x7f)
            return false;
    for (const QString &seg : path.split(QLatin1Char('/'))) {
        if (seg.isEmpty() || seg == QLatin1String(".") || seg == QLatin1String(".."))
            return false;
        if (seg.endsWith(QLatin1String(".part")))
            return false; // would collide with our own partial files
    }
    return true;
}

QList<HubFile> parse(const QByteArray &json)
{
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError)
        bad(QStringLiteral("not JSON (%1)").arg(err.errorString()));
    if (!doc.isArray())
        bad(QStringLiteral("expected a JSON array of entries"));
    QList<HubFile> out;
    for (const QJsonValue &v : doc.array()) {
        const QJsonObject o = v.toObject();
        const QString type = o.value(QLatin1String("type")).toString();
        const QString path = o.value(QLatin1String("path")).toString();
        if (type == QLatin1String("directory"))
            continue;
        if (type != QLatin1String("file"))
            bad(QStringLiteral("entry '%1' has unknown type '%2'").arg(path, type));
        if (!isSafeRelativePath(path))
            bad(QStringLiteral("unsafe file path '%1'").arg(path));
        HubFile f;
        f.path = path;
        const QJsonValue size = o.value(QLatin1String("size"));
        if (!size.isDouble() || size.toDouble() < 0 || size.toDouble() > 9.0e15)
            bad(QStringLiteral("entry '%1' has no valid size").arg(path));
        f.size = static_cast<qint64>(size.toDouble());
        f.gitOid = o.value(QLatin1String("oid")).toString().toLower();
        if (!f.gitOid.isEmpty() && !isHex(f.gitOid, 40))
            f.gitOid.clear(); // not a sha1 (another object format): no git check for this file
        const QJsonObject lfs = o.value(QLatin1String("lfs")).toObject();
        if (!lfs.isEmpty()) {
            f.sha256 = lfs.value(QLatin1String("oid")).toString().toLower();
            if (f.sha256.startsWith(QLatin1String("sha256:")))
                f.sha256 = f.sha256.mid(7);
            if (!isHex(f.sha256, 64))
                bad(QStringLiteral("entry '%1' has an lfs.oid that is not a sha256").arg(path));
            const QJsonValue lsize = lfs.value(QLatin1String("size"));
            if (lsize.isDouble() && static_cast<qint64>(lsize.toDouble()) != f.size)
                bad(QStringLiteral("entry '%1' gives two different sizes").arg(path));
        }
        out.append(f);
    }
    return out;
}

QUrl nextPage(const QByteArray &linkHeader, const QUrl &base)
{
    // <https://host/api/...&cursor=abc>; rel="next", <...>; rel="prev"
    static const QRegularExpression link(QStringLiteral("<([^>]*)>\\s*((?:;[^,<]*)*)"));
    auto it = link.globalMatch(QString::fromLatin1(linkHeader));
    while (it.hasNext()) {
        const auto m = it.next();
        static const QRegularExpression relNext(QStringLiteral(";\\s*rel\\s*=\\s*\"?([^\";]*)\"?"));
        const auto r = relNext.match(m.captured(2));
        if (r.hasMatch() && r.captured(1).split(QLatin1Char(' ')).contains(QLatin1String("next")))
            return base.resolved(QUrl(m.captured(1)));
    }
    return {};
}

namespace {
bool globAt(const QString &p, qsizetype pi, const QString &s, qsizetype si)
{
    while (pi < p.size()) {
        const QChar c = p[pi];
        if (c == QLatin1Char('*')) {
            while (pi < p.size() && p[pi] == QLatin1Char('*'))
                ++pi;
            if (pi == p.size())
                return true;
            for (qsizetype k = si; k <= s.size(); ++k)
                if (globAt(p, pi, s, k))
                    return true;
            return false;
        }
        if (si >= s.size())
            return false;
        if (c == QLatin1Char('?')) {
            ++pi;
            ++si;
            continue;
        }
        if (c == QLatin1Char('[')) {
            qsizetype q = pi + 1;
            bool negate = false;
            if (q < p.size() && (p[q] == QLatin1Char('!') || p[q] == QLatin1Char('^'))) {
                negate = true;
                ++q;
            }
            bool matched = false;
            bool first = true;
            while (q < p.size() && (first || p[q] != QLatin1Char(']'))) {
                first = false;
                if (q + 2 < p.size() && p[q + 1] == QLatin1Char('-') && p[q + 2] != QLatin1Char(']')) {
                    if (s[si] >= p[q] && s[si] <= p[q + 2])
                        matched = true;
                    q += 3;
                } else {
                    if (s[si] == p[q])
                        matched = true;
                    ++q;
                }
            }
            if (q >= p.size()) { // no closing ']': a literal '['
                if (s[si] != c)
                    return false;
                ++pi;
                ++si;
                continue;
            }
            if (matched == negate)
                return false;
            pi = q + 1;
            ++si;
            continue;
        }
        if (c != s[si])
            return false;
        ++pi;
        ++si;
    }
    return si == s.size();
}
} // namespace

bool globMatch(const QString &pattern, const QString &path)
{
    return globAt(pattern, 0, path, 0);
}

QList<HubFile> filter(const QList<HubFile> &files, const QStringList &globs)
{
    if (globs.isEmpty())
        return files;
    QList<HubFile> out;
    for (const HubFile &f : files)
        for (const QString &g : globs)
            if (globMatch(g, f.path)) {
                out.append(f);
                break;
            }
    return out;
}

} // namespace hublisting
