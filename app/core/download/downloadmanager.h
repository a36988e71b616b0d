// DownloadManager: the GUI-thread face of the downloader (a QML singleton; the CLI makes its
// own). It owns the worker thread and mirrors the worker's snapshots in properties and in the
// file model. Every call returns at once; answers arrive as property changes and signals.
#pragma once

#include "download/downloadfilemodel.h"
#include "download/downloadoptions.h"
#include "download/downloadsnapshot.h"
#include "download/downloadworker.h"
#include "singleton/appsingleton.h"

#include "download/hubendpoint.h"

#include <QObject>
#include <QQmlEngine>
#include <QThread>
#include <QVariantList>

class DownloadManager : public QObject, public AppSingleton<DownloadManager> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(DownloadFileModel *files READ files CONSTANT)
    Q_PROPERTY(bool hasJob READ hasJob NOTIFY changed)
    Q_PROPERTY(Download::JobState state READ state NOTIFY changed)
    Q_PROPERTY(QString reason READ reason NOTIFY changed)
    Q_PROPERTY(QString repo READ repo NOTIFY changed)
    Q_PROPERTY(QString revision READ revision NOTIFY changed)
    Q_PROPERTY(QString destination READ destination NOTIFY changed)
    // The destination while a download into it is unfinished (listing, running, paused); else "".
    Q_PROPERTY(QString unfinishedDestination READ unfinishedDestination NOTIFY changed)
    Q_PROPERTY(qint64 totalBytes READ totalBytes NOTIFY changed)
    Q_PROPERTY(qint64 doneBytes READ doneBytes NOTIFY changed)
    Q_PROPERTY(qint64 transferredBytes READ transferredBytes NOTIFY changed)
    Q_PROPERTY(double progress READ progress NOTIFY changed)
    Q_PROPERTY(double speed READ speed NOTIFY changed)
    Q_PROPERTY(qint64 etaSeconds READ etaSeconds NOTIFY changed)
    Q_PROPERTY(int retries READ retries NOTIFY changed)
    Q_PROPERTY(int fileCount READ fileCount NOTIFY changed)
    Q_PROPERTY(int doneFiles READ doneFiles NOTIFY changed)
    Q_PROPERTY(int failedFiles READ failedFiles NOTIFY changed)
    Q_PROPERTY(QVariantList activeFiles READ activeFiles NOTIFY changed)
    Q_PROPERTY(qint64 downloadBytesNeeded READ downloadBytesNeeded NOTIFY changed)
    Q_PROPERTY(qint64 containerBytesNeeded READ containerBytesNeeded NOTIFY changed)
    // containerBytesNeeded is the converter's plan (the Convert page's figure), not the bound.
    Q_PROPERTY(bool containerPlanned READ containerPlanned NOTIFY changed)
    Q_PROPERTY(qint64 freeBytes READ freeBytes NOTIFY changed)
    Q_PROPERTY(QString volume READ volume NOTIFY changed)
    Q_PROPERTY(bool spaceOk READ spaceOk NOTIFY changed)
    Q_PROPERTY(QString lastFinishedFolder READ lastFinishedFolder NOTIFY changed)
    Q_PROPERTY(QVariantList presets READ presets CONSTANT)
    Q_PROPERTY(QString endpoint READ endpoint WRITE setEndpoint NOTIFY settingsChanged)
    // The hub the next listing and download use, and where it comes from, for Settings:
    // "settings" (saved here), "HF_ENDPOINT" (the environment) or "default" (the public hub).
    Q_PROPERTY(QString effectiveEndpoint READ effectiveEndpoint NOTIFY settingsChanged)
    Q_PROPERTY(QString endpointSource READ endpointSource NOTIFY settingsChanged)
    Q_PROPERTY(int parallelFiles READ parallelFiles WRITE setParallelFiles NOTIFY settingsChanged)
    Q_PROPERTY(qint64 bandwidthLimit READ bandwidthLimit WRITE setBandwidthLimit NOTIFY settingsChanged)
    Q_PROPERTY(bool hasToken READ hasToken NOTIFY settingsChanged)
    Q_PROPERTY(QString tokenSource READ tokenSource NOTIFY settingsChanged)

public:
    struct Config {
        QString queuePath;          // the persistent queue (JSON)
        QString modelsFolder;       // where downloads go by default (owner--name below it)
        DownloadOptions options = DownloadOptions::fromEnvironment();
        QString endpoint;           // empty: HF_ENDPOINT, else the public hub
        QString token;              // empty: HF_TOKEN if set
        bool autoResume = true;     // a job that was running when the app quit starts again
        bool useSettings = false;   // read and save endpoint, token, parallel files, limit in QSettings
    };

    // The app's instance: queue in the data folder, settings from QSettings. No default argument:
    // Qt 6.4 prefers a default constructor over create() for QML singletons.
    explicit DownloadManager(QObject *parent);
    DownloadManager(const Config &config, QObject *parent);
    ~DownloadManager() override;

    DownloadFileModel *files() const { return m_files; }
    bool hasJob() const { return m_snap.hasJob; }
    JobState state() const { return m_snap.state; }
    QString reason() const { return m_snap.reason; }
    QString repo() const { return m_snap.repo; }
    QString revision() const { return m_snap.revision; }
    QString destination() const { return m_snap.dest; }
    QString unfinishedDestination() const { return m_snap.unfinished ? m_snap.dest : QString(); }
    qint64 totalBytes() const { return m_snap.totalBytes; }
    qint64 doneBytes() const { return m_snap.doneBytes; }
    qint64 transferredBytes() const { return m_snap.transferredBytes; }
    double progress() const { return m_snap.totalBytes > 0 ? static_cast<double>(m_snap.doneBytes) / m_snap.totalBytes : 0; }
    double speed() const { return m_snap.speed; }
    qint64 etaSeconds() const { return m_snap.etaSeconds; }
    int retries() const { return m_snap.retries; }
    int fileCount() const { return static_cast<int>(m_snap.files.size()); }
    int doneFiles() const { return m_snap.doneFiles; }
    int failedFiles() const { return m_snap.failedFiles; }
    QVariantList activeFiles() const { return m_active; }
    qint64 downloadBytesNeeded() const { return m_snap.space.downloadBytes; }
    qint64 containerBytesNeeded() const { return m_snap.space.containerBytes; }
    bool containerPlanned() const { return m_snap.space.containerPlanned; }
    qint64 freeBytes() const { return m_snap.space.freeBytes; }
    QString volume() const { return m_snap.space.volume; }
    bool spaceOk() const { return m_snap.space.enough(); }
    QString lastFinishedFolder() const { return m_lastFinished; }
    QVariantList presets() const;
    const DownloadSnapshot &snapshot() const { return m_snap; }

    QString endpoint() const { return m_endpoint; }
    QString effectiveEndpoint() const { return HubEndpoint::resolve(m_endpoint); }
    QString endpointSource() const;
    void setEndpoint(const QString &endpoint);
    int parallelFiles() const { return m_parallel; }
    void setParallelFiles(int n);
    qint64 bandwidthLimit() const { return m_limit; }
    void setBandwidthLimit(qint64 bytesPerSecond);
    bool hasToken() const { return !HubEndpoint::resolveToken(m_savedToken).isEmpty(); }
    QString tokenSource() const;

    // "owner/name" from an id or a hub URL; empty if it is neither.
    Q_INVOKABLE QString normalizeRepo(const QString &text) const { return HubEndpoint::normalizeRepo(text); }
    // The folder a repository is downloaded into by default: <models folder>/owner--name.
    Q_INVOKABLE QString defaultDestination(const QString &repo) const;
    // Lists the repository (sizes, space needed) without downloading.
    Q_INVOKABLE void check(const QString &repoText, const QString &revision = QStringLiteral("main"));
    // Lists, checks the space, and downloads into dest (default: defaultDestination(repo)).
    Q_INVOKABLE void start(const QString &repoText, const QString &revision = QStringLiteral("main"), const QString &dest = {});
    Q_INVOKABLE void pause();
    Q_INVOKABLE void resume();
    Q_INVOKABLE void cancel();
    Q_INVOKABLE void retryFailed();
    // Saved in the settings; HF_TOKEN, when set, takes precedence.
    Q_INVOKABLE void setAccessToken(const QString &token);

    // For the CLI and tests: a fully specified job.
    void startJob(const JobSpec &spec);

Q_SIGNALS:
    void changed();
    void settingsChanged();
    // The job stopped: every file verified (ok), or why not.
    void finished(bool ok, const QString &summary);
    // A line worth showing in a log: retries, restarts from zero, verified files, failures.
    void event(const QString &path, const QString &message);
    // A call was refused before reaching the worker (e.g. not a repository name).
    void refused(const QString &message);

private:
    void init(const Config &config);
    void onSnapshot(const DownloadSnapshot &s);
    JobSpec specFor(const QString &repoText, const QString &revision, const QString &dest, bool *ok);

    QThread m_thread;
    DownloadWorker *m_worker = nullptr;
    DownloadFileModel *m_files = nullptr;
    DownloadSnapshot m_snap;
    QVariantList m_active;
    QString m_lastFinished;
    QString m_modelsFolder;
    QString m_endpoint;
    QString m_savedToken;
    int m_parallel = 3;
    qint64 m_limit = 0;
    bool m_useSettings = false;
};
