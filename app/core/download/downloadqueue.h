// The persistent download queue: one job (a repository at a revision going into a folder) and
// the state of each of its files. Saved as JSON with an atomic replace (QSaveFile) on every
// state change, so quitting the app, a crash or `kill -9` of the CLI loses nothing that the
// .part files on disk do not already say: on restart the job picks up where it was.
#pragma once

#include "download/downloadstate.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

QString fileStateName(FileState s);
FileState fileStateFromName(const QString &name);

struct QueuedFile {
    // From the listing.
    QString path;
    qint64 size = 0;
    QString sha256;
    QString gitOid;
    // Persisted progress.
    FileState state = FileState::Pending;
    QString reason;          // why it failed or was paused; the last retry's cause while active
    QByteArray etag;         // the validator the .part was started with
    int attempts = 0;        // consecutive failed attempts without progress
    int retries = 0;         // every retry, for the UI
    bool freshRetryUsed = false; // the one from-zero retry after a checksum mismatch
    qint64 doneMtimeMs = 0;  // mtime of the verified file: unchanged means no need to hash again
    // Runtime only (not saved).
    qint64 onDisk = 0;       // bytes in the .part (size once done)
    qint64 transferred = 0;  // body bytes received in this session, faults included
    QString detail;          // "waiting 4 s after: connection cut"

    bool sameContentAs(const QueuedFile &o) const
    {
        return path == o.path && size == o.size && sha256 == o.sha256 && gitOid == o.gitOid;
    }
};

QString jobStateName(JobState s);
JobState jobStateFromName(const QString &name);

struct DownloadJob {
    QString repo;
    QString revision;
    QString endpoint;
    QString dest;
    QStringList include;
    bool countContainer = true; // free-space check counts the container this becomes
    // The container's size as the converter plans it, once every file is here (-1: not yet);
    // not saved: planned again after a restart.
    qint64 plannedContainerBytes = -1;
    JobState state = JobState::Ready;
    QString reason;
    std::vector<QueuedFile> files; // a vector: transfers hold pointers to its elements, which never move while they run

    bool sameTarget(const DownloadJob &o) const
    {
        return repo == o.repo && revision == o.revision && dest == o.dest;
    }
};

namespace downloadqueue {
// nullopt when there is no queue file; throws std::runtime_error for an unreadable one.
std::optional<DownloadJob> load(const QString &path);
// Atomic replace; returns false with *error set on failure.
bool save(const QString &path, const DownloadJob &job, QString *error);
void remove(const QString &path);
} // namespace downloadqueue
