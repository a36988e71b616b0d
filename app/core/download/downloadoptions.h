// Tunables of the downloader. Defaults suit a multi-hour pull from the public hub; tests
// shrink the timeouts through the environment (WASTE_DOWNLOAD_*) so faults resolve in seconds.
#pragma once

#include <QtGlobal>

struct DownloadOptions {
    int parallelFiles = 3;         // files transferred at once (clamped to 1..4)
    qint64 bandwidthLimit = 0;     // bytes per second over all files; 0 = unlimited
    int stallMs = 60000;           // no body bytes for this long: abort and retry the request
    int backoffBaseMs = 2000;      // first retry waits up to this (full jitter), doubling each time
    int backoffMaxMs = 120000;     // ceiling of the doubling
    int retryAfterCapMs = 900000;  // a Retry-After longer than this is shortened to it (15 min)
    int maxAttempts = 10;          // consecutive failed attempts without progress before a file fails
    int maxRedirects = 10;

    // The defaults above, overridden by WASTE_DOWNLOAD_JOBS, _LIMIT (bytes/s), _STALL_MS,
    // _BACKOFF_MS, _BACKOFF_MAX_MS, _RETRY_AFTER_CAP_MS and _ATTEMPTS where they are set.
    static DownloadOptions fromEnvironment();
    DownloadOptions clamped() const;
};
