// The downloader's engine room, on its own thread: the network access manager, the job and
// its persistent queue, the file transfers (2-4 at once), the bandwidth limiter and the
// free-space checks. DownloadManager (GUI thread) drives it with queued calls and receives
// DownloadSnapshot values; nothing here ever runs on the GUI thread.
#pragma once

#include "download/bandwidthlimiter.h"
#include "download/downloadoptions.h"
#include "download/downloadqueue.h"
#include "download/downloadsnapshot.h"
#include "download/hubendpoint.h"
#include "download/hublisting.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <optional>
#include <random>

class QNetworkAccessManager;
class FileTransfer;
class HubLister;

struct JobSpec {
    QString repo;
    QString revision = QStringLiteral("main");
    QString endpoint;  // resolved already (--endpoint / HF_ENDPOINT / default)
    QString dest;
    QStringList include;
    bool countContainer = true;
};
Q_DECLARE_METATYPE(JobSpec)

class DownloadWorker : public QObject {
    Q_OBJECT
public:
    DownloadWorker(const DownloadOptions &options, const QString &queuePath, const QString &token);
    ~DownloadWorker() override;

    // All of these run on the worker thread (the manager calls them queued).
    void initialize(bool autoResume);
    void prepare(const JobSpec &spec, bool andStart); // list the repository; start if asked
    void startJob();                                  // start or resume: space check, then transfers
    void pause();
    void cancel();                                    // stop, delete the .part files, forget the job
    void retryFailed();
    void setParallel(int n);
    void setBandwidthLimit(qint64 bytesPerSecond);
    void setToken(const QString &token);
    void shutdown();                                  // stop transfers (keeping .part files), save

Q_SIGNALS:
    void snapshotReady(const DownloadSnapshot &snapshot);
    void event(const QString &path, const QString &message);
    // The job stopped for good or needs the user: all files verified (ok), some failed, the
    // listing failed, not enough space, or a write failed.
    void jobEnded(bool allVerified, const QString &summary);

private:
    void onListed(const QList<HubFile> &files, bool andStart);
    void endJob(JobState state, const QString &reason, bool ok);
    void schedule();
    void onFileFinished(int index);
    void onDiskProblem(const QString &reason);
    void refreshDisk();
    SpaceCheck computeSpace() const;
    void planContainer();
    void stopTransfers();
    void saveSoon();
    void saveNow();
    void emitSoon();
    void emitSnapshot(bool updateRates = false);
    bool makeEndpoint(const QString &endpoint, QString *error);

    DownloadOptions m_options;
    QString m_queuePath;
    QString m_token;
    QNetworkAccessManager *m_nam = nullptr;
    std::optional<DownloadJob> m_job;
    HubEndpoint m_endpoint;
    QPointer<HubLister> m_lister;
    QHash<int, FileTransfer *> m_transfers;
    BandwidthLimiter m_limiter;
    std::mt19937_64 m_rng;
    QTimer m_tick;
    // While the file list waits to be asked for again: the reason and when, so the page's
    // "Trying again in N s" counts down (a one-second timer rewrites it).
    QTimer m_listRetryTick;
    QString m_listRetryReason;
    qint64 m_listRetryAt = 0; // ms since the epoch
    int m_listRetryAttempt = 0;
    void showListRetry();
    QTimer m_saveTimer;
    QTimer m_emitTimer;
    QElapsedTimer m_tickClock;
    std::vector<qint64> m_lastTransferred;
    std::vector<double> m_speed;
    qint64 m_lastTotalTransferred = 0;
    double m_totalSpeed = 0;
    SpaceCheck m_space;
    QString m_notice; // a message about the last refused action (e.g. another job is unfinished)
};
