// The checksum a file is verified against, computed incrementally as bytes are written:
// sha256 for LFS files (lfs.oid), the git blob sha1 for small files kept in git (oid), and
// none only when the hub gave neither (then the size is all we can check, and we say so).
#pragma once

#include <QCryptographicHash>
#include <QString>
#include <atomic>
#include <memory>

class FileChecksum {
public:
    enum Kind { None, Sha256, GitSha1 };

    FileChecksum() = default;
    FileChecksum(Kind kind, const QString &expectedHex, qint64 size);
    FileChecksum(FileChecksum &&) noexcept = default;
    FileChecksum &operator=(FileChecksum &&) noexcept = default;

    Kind kind() const { return m_kind; }
    QString expected() const { return m_expected; }
    QString kindName() const;

    void reset();
    void addData(const char *data, qsizetype n);
    // Lowercase hex of what was fed so far (ends the hash: call once, after the last byte).
    QString result();
    bool matches(const QString &actual) const { return m_kind == None || actual == m_expected; }

    // Feeds the first n bytes of a file (the .part of a resumed download, or a finished file).
    // Blocking: run it on a pool thread. Returns false with *error set if the file is shorter or
    // unreadable, or when *cancel becomes true.
    bool addFilePrefix(const QString &path, qint64 n, const std::atomic<bool> *cancel, QString *error,
                       std::atomic<qint64> *progress = nullptr);

private:
    Kind m_kind = None;
    QString m_expected;
    qint64 m_size = 0;
    std::unique_ptr<QCryptographicHash> m_hash;
};
