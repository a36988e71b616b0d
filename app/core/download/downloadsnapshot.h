// What the worker thread tells the GUI thread about the download, a few times a second and on
// every state change: plain values, copied across the thread boundary.
#pragma once

#include "download/downloadstate.h"

#include <QList>
#include <QMetaType>
#include <QString>

struct FileSnapshot {
    QString path;
    qint64 size = 0;
    FileState state = FileState::Pending;
    QString reason;  // why it failed / was paused, or the last retry's cause
    QString detail;  // what it is doing now ("retry 2 in 4.0 s after: connection cut")
    QString checksum; // "sha256", "git sha1" or "size only"
    qint64 onDisk = 0;
    qint64 transferred = 0;
    qint64 verified = 0;  // bytes hashed so far while checking what is on disk
    double speed = 0;     // bytes/s, smoothed
    qint64 etaSeconds = -1;
    int retries = 0;

    bool operator==(const FileSnapshot &) const = default;
};

struct SpaceCheck {
    QString volume;          // mount point of the destination
    qint64 freeBytes = -1;
    qint64 downloadBytes = 0; // still to download
    qint64 containerBytes = 0; // the container this becomes (about the source size); 0 when not counted
    bool containerPlanned = false; // containerBytes is the converter's own plan (the Convert page's figure)
    bool enough() const { return freeBytes < 0 || freeBytes >= downloadBytes + containerBytes; }
};

struct DownloadSnapshot {
    bool hasJob = false;
    JobState state = JobState::Idle;
    bool unfinished = false; // listing, running or paused: the destination is being written
    QString reason;
    QString repo;
    QString revision;
    QString endpoint;
    QString dest;
    QList<FileSnapshot> files;
    qint64 totalBytes = 0;
    qint64 doneBytes = 0;        // bytes on disk (verified files and .part contents)
    qint64 transferredBytes = 0; // body bytes received in this session
    double speed = 0;
    qint64 etaSeconds = -1;
    int retries = 0;
    int doneFiles = 0;
    int failedFiles = 0;
    SpaceCheck space;
};

Q_DECLARE_METATYPE(DownloadSnapshot)
