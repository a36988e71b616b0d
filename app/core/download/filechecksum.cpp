#include "download/filechecksum.h"

#include <QFile>

FileChecksum::FileChecksum(Kind kind, const QString &expectedHex, qint64 size)
    : m_kind(kind), m_expected(expectedHex.toLower()), m_size(size)
{
    reset();
}

QString FileChecksum::kindName() const
{
    switch (m_kind) {
    case Sha256: return QStringLiteral("sha256");
    case GitSha1: return QStringLiteral("git sha1");
    case None: break;
    }
    return QStringLiteral("size only");
}

void FileChecksum::reset()
{
    if (m_kind == None) {
        m_hash.reset();
        return;
    }
    m_hash = std::make_unique<QCryptographicHash>(m_kind == Sha256 ? QCryptographicHash::Sha256 : QCryptographicHash::Sha1);
    if (m_kind == GitSha1) {
        // git hashes "blob <size>\0" followed by the content.
        const QByteArray header = "blob " + QByteArray::number(m_size) + '\0';
        m_hash->addData(header);
    }
}

void FileChecksum::addData(const char *data, qsizetype n)
{
    if (m_hash && n > 0)
        m_hash->addData(QByteArrayView(data, n));
}

QString FileChecksum::result()
{
    if (!m_hash)
        return {};
    return QString::fromLatin1(m_hash->result().toHex());
}

bool FileChecksum::addFilePrefix(const QString &path, qint64 n, const std::atomic<bool> *cancel, QString *error,
                                 std::atomic<qint64> *progress)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read %1: %2").arg(path, f.errorString());
        return false;
    }
    QByteArray buf(4 << 20, Qt::Uninitialized);
    qint64 left = n;
    while (left > 0) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            *error = QStringLiteral("cancelled");
            return false;
        }
        const qint64 got = f.read(buf.data(), qMin<qint64>(left, buf.size()));
        if (got <= 0) {
            *error = QStringLiteral("%1 ended early or could not be read: %2").arg(path, f.errorString());
            return false;
        }
        addData(buf.constData(), got);
        left -= got;
        if (progress)
            progress->fetch_add(got, std::memory_order_relaxed);
    }
    return true;
}
