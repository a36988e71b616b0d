#include "download/downloadmanager.h"

#include "settings/appsettings.h"
#include "settings/datafolder.h"
#include "threads/threadpriority.h"
#include "download/releasepresets.h"
#include "settings/tokenstore.h"

#include <QDir>
#include <QSettings>
#include <QStandardPaths>

namespace {

QString ownDataFolder()
{
    if (AppSettings *a = AppSettings::instance())
        return a->dataFolder();
    return ::appDataFolder();
}
} // namespace

DownloadManager::DownloadManager(QObject *parent) : QObject(parent)
{
    Config c;
    c.queuePath = ownDataFolder() + QStringLiteral("/downloads.json");
    c.modelsFolder = AppSettings::instance() ? AppSettings::instance()->modelsFolder() : ownDataFolder() + QStringLiteral("/models");
    c.useSettings = true;
    init(c);
}

DownloadManager::DownloadManager(const Config &config, QObject *parent) : QObject(parent)
{
    init(config);
}

void DownloadManager::init(const Config &config)
{
    qRegisterMetaType<DownloadSnapshot>();
    qRegisterMetaType<JobSpec>();
    m_files = new DownloadFileModel(this);
    m_modelsFolder = config.modelsFolder;
    m_useSettings = config.useSettings;
    DownloadOptions options = config.options;
    m_endpoint = config.endpoint;
    m_savedToken = config.token;
    if (m_useSettings) {
        if (const QString saved = tokenstore::load(); !saved.isEmpty())
            m_savedToken = saved;
        QSettings s;
        m_endpoint = s.value(QStringLiteral("download/endpoint"), m_endpoint).toString();
        options.parallelFiles = s.value(QStringLiteral("download/parallel"), options.parallelFiles).toInt();
        options.bandwidthLimit = s.value(QStringLiteral("download/limit"), options.bandwidthLimit).toLongLong();
    }
    options = options.clamped();
    m_parallel = options.parallelFiles;
    m_limit = options.bandwidthLimit;

    m_worker = new DownloadWorker(options, config.queuePath, HubEndpoint::resolveToken(m_savedToken));
    m_worker->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("download"));
    connect(m_worker, &DownloadWorker::snapshotReady, this, &DownloadManager::onSnapshot);
    connect(m_worker, &DownloadWorker::event, this, &DownloadManager::event);
    connect(m_worker, &DownloadWorker::jobEnded, this, [this](bool ok, const QString &summary) {
        if (ok)
            m_lastFinished = m_snap.dest;
        Q_EMIT changed();
        Q_EMIT finished(ok, summary);
    });
    connect(&m_thread, &QThread::started, m_worker, [] { setCurrentThreadRole(ThreadRole::Background); }, Qt::DirectConnection);
    m_thread.start();
    const bool autoResume = config.autoResume;
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w, autoResume] { w->initialize(autoResume); }, Qt::QueuedConnection);
}

DownloadManager::~DownloadManager()
{
    DownloadWorker *w = m_worker;
    // Stop transfers and save the queue on the worker's own thread, then end it: the only
    // wait on this thread, at exit, and short (no network round trip).
    QMetaObject::invokeMethod(w, [w] {
        w->shutdown();
        delete w;
    }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

QVariantList DownloadManager::presets() const { return ReleasePresets::asVariants(); }

QString DownloadManager::defaultDestination(const QString &repo) const
{
    const QString folder = AppSettings::instance() && m_useSettings ? AppSettings::instance()->modelsFolder() : m_modelsFolder;
    const QString id = HubEndpoint::normalizeRepo(repo);
    return QDir::cleanPath(folder + QLatin1Char('/') + HubEndpoint::folderName(id.isEmpty() ? repo : id));
}

JobSpec DownloadManager::specFor(const QString &repoText, const QString &revision, const QString &dest, bool *ok)
{
    JobSpec spec;
    spec.repo = HubEndpoint::normalizeRepo(repoText);
    *ok = !spec.repo.isEmpty();
    if (!*ok) {
        Q_EMIT refused(tr("'%1' is not a repository: use owner/name, e.g. moonshotai/Kimi-Linear-48B-A3B-Instruct").arg(repoText));
        return spec;
    }
    spec.revision = revision.trimmed().isEmpty() ? QStringLiteral("main") : revision.trimmed();
    spec.endpoint = HubEndpoint::resolve(m_endpoint);
    spec.dest = dest.isEmpty() ? defaultDestination(spec.repo) : dest;
    return spec;
}

void DownloadManager::check(const QString &repoText, const QString &revision)
{
    bool ok = false;
    const JobSpec spec = specFor(repoText, revision, {}, &ok);
    if (!ok)
        return;
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w, spec] { w->prepare(spec, false); }, Qt::QueuedConnection);
}

void DownloadManager::start(const QString &repoText, const QString &revision, const QString &dest)
{
    bool ok = false;
    const JobSpec spec = specFor(repoText, revision, dest, &ok);
    if (ok)
        startJob(spec);
}

void DownloadManager::startJob(const JobSpec &spec)
{
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w, spec] { w->prepare(spec, true); }, Qt::QueuedConnection);
}

void DownloadManager::pause()
{
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w] { w->pause(); }, Qt::QueuedConnection);
}

void DownloadManager::resume()
{
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w] { w->startJob(); }, Qt::QueuedConnection);
}

void DownloadManager::cancel()
{
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w] { w->cancel(); }, Qt::QueuedConnection);
}

void DownloadManager::retryFailed()
{
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w] { w->retryFailed(); }, Qt::QueuedConnection);
}

void DownloadManager::setEndpoint(const QString &endpoint)
{
    if (endpoint == m_endpoint)
        return;
    m_endpoint = endpoint.trimmed();
    if (m_useSettings)
        QSettings().setValue(QStringLiteral("download/endpoint"), m_endpoint);
    Q_EMIT settingsChanged();
}

QString DownloadManager::endpointSource() const
{
    if (!m_endpoint.isEmpty())
        return QStringLiteral("settings");
    return qEnvironmentVariable("HF_ENDPOINT").trimmed().isEmpty() ? QStringLiteral("default") : QStringLiteral("HF_ENDPOINT");
}

void DownloadManager::setParallelFiles(int n)
{
    n = qBound(1, n, 4);
    if (n == m_parallel)
        return;
    m_parallel = n;
    if (m_useSettings)
        QSettings().setValue(QStringLiteral("download/parallel"), n);
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w, n] { w->setParallel(n); }, Qt::QueuedConnection);
    Q_EMIT settingsChanged();
}

void DownloadManager::setBandwidthLimit(qint64 bytesPerSecond)
{
    bytesPerSecond = qMax<qint64>(0, bytesPerSecond);
    if (bytesPerSecond == m_limit)
        return;
    m_limit = bytesPerSecond;
    if (m_useSettings)
        QSettings().setValue(QStringLiteral("download/limit"), bytesPerSecond);
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w, bytesPerSecond] { w->setBandwidthLimit(bytesPerSecond); }, Qt::QueuedConnection);
    Q_EMIT settingsChanged();
}

QString DownloadManager::tokenSource() const
{
    if (!qEnvironmentVariable("HF_TOKEN").trimmed().isEmpty())
        return QStringLiteral("HF_TOKEN");
    return m_savedToken.trimmed().isEmpty() ? QString() : QStringLiteral("settings");
}

void DownloadManager::setAccessToken(const QString &token)
{
    m_savedToken = token.trimmed();
    if (m_useSettings) {
        if (const QString error = tokenstore::save(m_savedToken); !error.isEmpty())
            Q_EMIT event(QString(), tr("The access token is used for this session but was not saved: %1").arg(error));
    }
    const QString effective = HubEndpoint::resolveToken(m_savedToken);
    DownloadWorker *w = m_worker;
    QMetaObject::invokeMethod(w, [w, effective] { w->setToken(effective); }, Qt::QueuedConnection);
    Q_EMIT settingsChanged();
}

void DownloadManager::onSnapshot(const DownloadSnapshot &s)
{
    m_snap = s;
    m_files->apply(s.files);
    m_active.clear();
    for (const FileSnapshot &f : s.files) {
        if (f.state != FileState::Active && f.state != FileState::Verifying)
            continue;
        m_active.append(QVariantMap{{QStringLiteral("path"), f.path},
                                    {QStringLiteral("size"), f.size},
                                    {QStringLiteral("state"), int(f.state)},
                                    {QStringLiteral("onDisk"), f.onDisk},
                                    {QStringLiteral("verified"), f.verified},
                                    {QStringLiteral("progress"), f.size > 0 ? double(f.state == FileState::Verifying ? f.verified : f.onDisk) / f.size : 0.0},
                                    {QStringLiteral("speed"), f.speed},
                                    {QStringLiteral("eta"), f.etaSeconds},
                                    {QStringLiteral("retries"), f.retries},
                                    {QStringLiteral("reason"), f.reason},
                                    {QStringLiteral("detail"), f.detail}});
    }
    if (s.state == JobState::Done)
        m_lastFinished = s.dest;
    Q_EMIT changed();
}
