// One file of a download job, from whatever is on disk to a verified file in place:
//   final file present and recorded as verified → done; present but unrecorded → hash it;
//   NAME.part present → hash what is there (pool thread), then ask for the rest with Range;
//   body bytes are written to NAME.part and hashed as they arrive; at the end the checksum is
//   compared and the .part renamed into place.
// Every answer is judged by resumerules::classify: a range is accepted only on 206 with the
// matching Content-Range (and the same ETag), a 200 to a ranged request restarts from zero,
// 416 on a complete .part goes to verification. Failures retry with full-jitter backoff
// (Retry-After honoured); a stall timer aborts silent connections. Lives on the worker thread.
#pragma once

#include "download/bandwidthlimiter.h"
#include "download/downloadoptions.h"
#include "download/downloadqueue.h"
#include "download/filechecksum.h"
#include "download/hubendpoint.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <atomic>
#include <memory>
#include <random>

class QNetworkAccessManager;
class QNetworkReply;

struct TransferContext {
    QNetworkAccessManager *nam = nullptr;
    HubEndpoint endpoint;
    QString repo;
    QString revision;
    QString dest;
    DownloadOptions options;
    BandwidthLimiter *limiter = nullptr;
    std::mt19937_64 *rng = nullptr;
};

class FileTransfer : public QObject {
    Q_OBJECT
public:
    FileTransfer(QueuedFile *file, const TransferContext &ctx, QObject *parent);
    ~FileTransfer() override;

    void start();
    // Pause, cancel or shutdown: abort the request and any hashing; the .part stays.
    void stop();
    QString partPath() const { return m_partPath; }
    QString finalPath() const { return m_finalPath; }
    // Bytes of the .part (or the finished file) hashed so far in a verification pass.
    qint64 verifiedBytes() const { return m_hashProgress ? m_hashProgress->load() : 0; }

    static QString partPathFor(const QString &dest, const QString &path) { return dest + QLatin1Char('/') + path + QStringLiteral(".part"); }
    static QString finalPathFor(const QString &dest, const QString &path) { return dest + QLatin1Char('/') + path; }

Q_SIGNALS:
    void changed();   // state, reason or detail changed: persist and show
    void finished();  // the file reached done or failed
    void diskProblem(const QString &reason); // writing failed (disk full, I/O error): pause the job
    void event(const QString &path, const QString &message); // a line worth logging (retries, restarts, verified)

private:
    struct HashOutcome {
        bool ok = false;
        QString error;
        std::shared_ptr<FileChecksum> sum;
    };
    enum class HashPurpose { ResumePart, VerifyPart, VerifyFinal };

    void examineDisk();
    void hashOnPool(const QString &path, qint64 n, HashPurpose purpose);
    void onHashed();
    void sendRequest(const QUrl &url, int hop);
    void handleHeaders();
    void pump();
    void onReplyFinished();
    void onStall();
    void verifyAndCommit();
    void retryLater(const QString &reason, qint64 retryAfterMs);
    void restartFresh(const QString &reason);
    void fail(const QString &reason);
    void finishDone(const QString &note);
    bool openPart(bool truncate);
    void dropReply();
    void setState(FileState s, const QString &detail = {});
    FileChecksum newChecksum() const;
    QUrl fileUrl() const;

    QueuedFile *m_file;
    TransferContext m_ctx;
    QString m_finalPath;
    QString m_partPath;
    QFile m_part;
    FileChecksum m_sum;
    qint64 m_offset = 0;       // .part size when the current request was sent
    qint64 m_written = 0;      // bytes in the .part now, all of them hashed
    qint64 m_attemptBytes = 0; // body bytes taken in this attempt
    bool m_headersDone = false;
    bool m_accepting = false;  // the current reply's body goes into the .part
    bool m_stopped = false;
    QPointer<QNetworkReply> m_reply;
    QTimer m_stallTimer;
    QTimer m_retryTimer;
    QTimer m_pumpTimer;
    HashPurpose m_hashPurpose = HashPurpose::ResumePart;
    QFutureWatcher<HashOutcome> m_hashWatcher;
    std::shared_ptr<std::atomic<bool>> m_cancelHash;
    std::shared_ptr<std::atomic<qint64>> m_hashProgress;
};
