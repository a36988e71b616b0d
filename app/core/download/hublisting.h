// The hub's file listing (GET .../tree/{rev}?recursive=1): one entry per file with its path,
// size and checksum: lfs.oid is the sha256 of the content; small files kept in git have only
// oid, the git blob sha1 ("blob <size>\0" + content). The listing is untrusted input: every
// path is checked before it becomes a file name.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

struct HubFile {
    QString path;
    qint64 size = -1;
    QString sha256;  // lowercase hex, from lfs.oid; empty when the file is not in LFS
    QString gitOid;  // lowercase hex git blob sha1, from oid
};

namespace hublisting {

// Parses one page of the listing. Directories are skipped. Throws std::runtime_error naming
// the first bad entry (unsafe path, missing size, malformed checksum).
QList<HubFile> parse(const QByteArray &json);

// A relative path that stays inside the destination: no absolute paths, no "..", no empty or
// "." segments, no backslashes, colons or control characters.
bool isSafeRelativePath(const QString &path);

// The rel="next" target of an RFC 8288 Link header (the hub paginates long listings), or an
// empty URL.
QUrl nextPage(const QByteArray &linkHeader, const QUrl &base);

// fnmatch-style glob without FNM_PATHNAME: '*' and '?' also match '/', [abc] and [!a-z] sets.
bool globMatch(const QString &pattern, const QString &path);
// Files matching any of the globs (all files when globs is empty).
QList<HubFile> filter(const QList<HubFile> &files, const QStringList &globs);

} // namespace hublisting
