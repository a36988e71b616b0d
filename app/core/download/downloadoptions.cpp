#include "download/downloadoptions.h"

#include <QString>
#include <type_traits>

namespace {
void overrideFromEnv(const char *name, auto &field)
{
    bool ok = false;
    const qint64 v = qEnvironmentVariable(name).toLongLong(&ok);
    if (ok && v >= 0)
        field = static_cast<std::remove_reference_t<decltype(field)>>(v);
}
} // namespace

DownloadOptions DownloadOptions::fromEnvironment()
{
    DownloadOptions o;
    overrideFromEnv("WASTE_DOWNLOAD_JOBS", o.parallelFiles);
    overrideFromEnv("WASTE_DOWNLOAD_LIMIT", o.bandwidthLimit);
    overrideFromEnv("WASTE_DOWNLOAD_STALL_MS", o.stallMs);
    overrideFromEnv("WASTE_DOWNLOAD_BACKOFF_MS", o.backoffBaseMs);
    overrideFromEnv("WASTE_DOWNLOAD_BACKOFF_MAX_MS", o.backoffMaxMs);
    overrideFromEnv("WASTE_DOWNLOAD_RETRY_AFTER_CAP_MS", o.retryAfterCapMs);
    overrideFromEnv("WASTE_DOWNLOAD_ATTEMPTS", o.maxAttempts);
    return o.clamped();
}

DownloadOptions DownloadOptions::clamped() const
{
    DownloadOptions o = *this;
    o.parallelFiles = qBound(1, o.parallelFiles, 4);
    o.bandwidthLimit = qMax<qint64>(0, o.bandwidthLimit);
    o.stallMs = qMax(50, o.stallMs);
    o.backoffBaseMs = qMax(0, o.backoffBaseMs);
    o.backoffMaxMs = qMax(o.backoffBaseMs, o.backoffMaxMs);
    o.retryAfterCapMs = qMax(0, o.retryAfterCapMs);
    o.maxAttempts = qMax(1, o.maxAttempts);
    o.maxRedirects = qBound(0, o.maxRedirects, 30);
    return o;
}
