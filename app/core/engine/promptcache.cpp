#include "engine/promptcache.h"

#include "engine/savedstate.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace {

const QString kSuffix = QStringLiteral(".state");
const QString kRecordSuffix = QStringLiteral(".json"); // savedstate's record beside each state

// The identity a record names (readRecord checks it; the scan reads it to index entries).
QString recordIdentity(const QString &path)
{
    QFile f(path + kRecordSuffix);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("model")).toString();
}

} // namespace

void PromptCache::configure(const QString &dir, qint64 maxBytes)
{
    if (dir != m_dir) {
        m_scanned = false;
        m_entries.clear();
    }
    m_dir = dir;
    m_maxBytes = std::max<qint64>(0, maxBytes);
    if (enabled() && m_scanned)
        evict();
}

QString PromptCache::pathFor(const QString &identity, std::span<const int32_t> prefix) const
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(identity.toUtf8());
    h.addData(QByteArrayView(reinterpret_cast<const char *>(prefix.data()), qsizetype(prefix.size_bytes())));
    return QDir(m_dir).filePath(QString::fromLatin1(h.result().toHex().left(32)) + kSuffix);
}

void PromptCache::scan()
{
    if (m_scanned)
        return;
    m_scanned = true;
    m_entries.clear();
    const QFileInfoList states = QDir(m_dir).entryInfoList({QStringLiteral("*") + kSuffix}, QDir::Files);
    for (const QFileInfo &state : states) {
        const QString path = state.absoluteFilePath();
        const QString identity = recordIdentity(path);
        std::optional<savedstate::Record> r = identity.isEmpty() ? std::nullopt : savedstate::readRecord(path, identity);
        if (!r || r->history.tokenCount() != r->position) {
            // A write cut short (no record yet), or a record that does not describe its state.
            savedstate::remove(path);
            continue;
        }
        m_entries.push_back({path, identity, r->history.tokens(), state.size()});
    }
    evict();
}

PromptCache::Hit PromptCache::longest(const QString &identity, std::span<const int32_t> prompt, qsizetype atLeast)
{
    if (!enabled())
        return {};
    scan();
    Hit best;
    for (const Entry &e : m_entries) {
        const auto n = qsizetype(e.tokens.size());
        if (e.identity != identity || n <= std::max(atLeast, best.tokens) || n >= qsizetype(prompt.size()))
            continue;
        if (std::equal(e.tokens.begin(), e.tokens.end(), prompt.begin()))
            best = {e.path, n};
    }
    if (!best.path.isEmpty())
        touch(best.path);
    return best;
}

bool PromptCache::contains(const QString &identity, std::span<const int32_t> prefix)
{
    scan();
    const QString path = pathFor(identity, prefix);
    return std::any_of(m_entries.begin(), m_entries.end(), [&](const Entry &e) { return e.path == path; });
}

void PromptCache::added(const QString &path)
{
    scan();
    const QString identity = recordIdentity(path);
    std::optional<savedstate::Record> r = savedstate::readRecord(path, identity);
    if (!r) {
        savedstate::remove(path);
        return;
    }
    m_entries.erase(std::remove_if(m_entries.begin(), m_entries.end(), [&](const Entry &e) { return e.path == path; }),
                    m_entries.end());
    m_entries.push_back({path, identity, r->history.tokens(), QFileInfo(path).size()});
    touch(path);
    evict();
}

void PromptCache::drop(const QString &path)
{
    savedstate::remove(path);
    m_entries.erase(std::remove_if(m_entries.begin(), m_entries.end(), [&](const Entry &e) { return e.path == path; }),
                    m_entries.end());
}

void PromptCache::touch(const QString &path) const
{
    // Last use is the state's modification time: it survives restarts with the entry.
    QFile f(path);
    if (f.open(QIODevice::ReadWrite))
        f.setFileTime(QDateTime::currentDateTime(), QFileDevice::FileModificationTime);
}

void PromptCache::evict()
{
    // Newest use first (each state's time read once, not on every comparison).
    QHash<QString, qint64> used;
    for (const Entry &e : m_entries)
        used.insert(e.path, QFileInfo(e.path).lastModified().toMSecsSinceEpoch());
    std::sort(m_entries.begin(), m_entries.end(),
              [&](const Entry &a, const Entry &b) { return used.value(a.path) > used.value(b.path); });
    qint64 total = 0;
    auto keep = m_entries.begin();
    for (; keep != m_entries.end(); ++keep) {
        if (total + keep->bytes > m_maxBytes)
            break;
        total += keep->bytes;
    }
    for (auto it = keep; it != m_entries.end(); ++it)
        savedstate::remove(it->path);
    m_entries.erase(keep, m_entries.end());
}

qint64 PromptCache::bytes() const
{
    qint64 total = 0;
    for (const Entry &e : m_entries)
        total += e.bytes;
    return total;
}

int PromptCache::entries() const
{
    return int(m_entries.size());
}
