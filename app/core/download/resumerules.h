// The rules that decide what a response means for a partial file, and how long to wait
// before the next try. Pure functions, so each rule has its own test.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <optional>
#include <random>

namespace resumerules {

struct ContentRange {
    qint64 first = -1; // -1 for the unsatisfied form "bytes */total"
    qint64 last = -1;
    qint64 total = -1; // -1 when the server wrote '*'
};
// "bytes 100-199/1000", "bytes */1000"; nullopt when malformed.
std::optional<ContentRange> parseContentRange(const QByteArray &value);

// Retry-After in milliseconds: delta-seconds or an HTTP-date (relative to now); nullopt if absent
// or unreadable.
std::optional<qint64> parseRetryAfter(const QByteArray &value, const QDateTime &now);

// Strong ETags only: a weak validator (W/"...") must not be used with If-Range.
bool isStrongEtag(const QByteArray &etag);

enum class Verdict {
    Append,         // 206 continuing exactly at our offset: append to the .part
    FromZero,       // 200 full body: truncate the .part and take this body from byte 0
    Verify,         // 416 and our .part already holds the whole file: check it
    RestartFresh,   // the server's range or validator does not match ours: drop the .part, ask again without Range
    Redirect,       // 3xx with a Location
    RetryLater,     // 429, 503 (Retry-After honoured) and other 5xx / 408
    Fail,           // 401/403/404 and other 4xx: retrying will not help
};

struct Decision {
    Verdict verdict = Verdict::Fail;
    QString reason; // what happened, in words, for the file's reason line
};

struct ResponseFacts {
    int status = 0;
    qint64 offset = 0;        // bytes already in the .part (0: no Range header was sent)
    qint64 expectedSize = 0;  // size from the listing
    QByteArray contentRange;  // header values as received (empty when absent)
    QByteArray contentLength;
    QByteArray etag;
    QByteArray knownEtag;     // the ETag the .part was started with (empty if unknown)
    bool hasLocation = false;
};

Decision classify(const ResponseFacts &r);

// Full-jitter exponential backoff: uniform in [0, min(maxMs, baseMs * 2^(attempt-1))].
qint64 backoffMs(int attempt, int baseMs, int maxMs, std::mt19937_64 &rng);

} // namespace resumerules
