// DownloadWorker: one download job's life on the worker thread, from listing the repository
// to the last verified file. Over 600 lines on purpose: listing, the space checks, scheduling
// transfers, pause / cancel / retry, saving the queue and the snapshots for the GUI all read
// and change the same job state; the parts that stand alone (FileTransfer, HubLister,
// BandwidthLimiter, the queue's file format, the resume rules) already live in files of
// their own.
#include "download/downloadworker.h"

#include "download/filetransfer.h"
#include "download/hublister.h"
#include "units/units.h"

#include <waste/convert.hpp>

#include <QDateTime>
#include <QDir>
#include <algorithm>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QStorageInfo>

namespace {
constexpr int kTickMs = 250;

// The nearest existing folder at or above path: QStorageInfo needs something that exists.
QString existingAncestor(const QString &path)
{
    QString p = QDir::cleanPath(QDir::current().absoluteFilePath(path));
    while (!QFileInfo::exists(p)) {
        const QString parent = QFileInfo(p).path();
        if (parent == p)
            break;
        p = parent;
    }
    return p;
}
} // namespace

DownloadWorker::DownloadWorker(const DownloadOptions &options, const QString &queuePath, const QString &token)
    : m_options(options.clamped()), m_queuePath(queuePath), m_token(token), m_rng(std::random_device{}()), m_tick(this), m_listRetryTick(this),
      m_saveTimer(this), m_emitTimer(this)
{
    // The timers are children so that moveToThread() takes them along to the worker thread.
    m_limiter.setRate(m_options.bandwidthLimit);
    m_tick.setInterval(kTickMs);
    connect(&m_tick, &QTimer::timeout, this, [this] { emitSnapshot(true); });
    m_listRetryTick.setSingleShot(true);
    m_listRetryTick.setTimerType(Qt::PreciseTimer);
    connect(&m_listRetryTick, &QTimer::timeout, this, [this] { showListRetry(); });
    m_saveTimer.setSingleShot(true);
    m_saveTimer.setInterval(100);
    connect(&m_saveTimer, &QTimer::timeout, this, &DownloadWorker::saveNow);
    m_emitTimer.setSingleShot(true);
    m_emitTimer.setInterval(0);
    connect(&m_emitTimer, &QTimer::timeout, this, [this] { emitSnapshot(false); });
}

DownloadWorker::~DownloadWorker()
{
    stopTransfers();
}

bool DownloadWorker::makeEndpoint(const QString &endpoint, QString *error)
{
    try {
        m_endpoint = HubEndpoint(endpoint, m_token);
        return true;
    } catch (const std::exception &e) {
        *error = QString::fromUtf8(e.what());
        return false;
    }
}

void DownloadWorker::initialize(bool autoResume)
{
    m_nam = new QNetworkAccessManager(this);
    m_tickClock.start();
    try {
        m_job = downloadqueue::load(m_queuePath);
    } catch (const std::exception &e) {
        m_notice = QString::fromUtf8(e.what());
        m_job.reset();
    }
    if (m_job) {
        QString err;
        if (!makeEndpoint(m_job->endpoint, &err)) {
            m_notice = err;
            m_job.reset();
        }
    }
    if (m_job) {
        const bool wasRunning = m_job->state == JobState::Running || m_job->state == JobState::Listing;
        for (QueuedFile &f : m_job->files)
            if (f.state == FileState::Active || f.state == FileState::Verifying)
                f.state = wasRunning ? FileState::Pending : FileState::Paused;
        if (m_job->state == JobState::Listing)
            m_job->state = m_job->files.empty() ? JobState::Failed : JobState::Ready;
        refreshDisk();
        if (wasRunning && autoResume && !m_job->files.empty()) {
            startJob();
            return;
        }
        if (wasRunning)
            m_job->state = JobState::Paused;
    }
    emitSnapshot();
}

void DownloadWorker::prepare(const JobSpec &spec, bool andStart)
{
    m_notice.clear();
    DownloadJob next;
    next.repo = spec.repo;
    next.revision = spec.revision.isEmpty() ? QStringLiteral("main") : spec.revision;
    next.endpoint = spec.endpoint;
    next.dest = QDir::cleanPath(QDir::current().absoluteFilePath(spec.dest));
    next.include = spec.include;
    next.countContainer = spec.countContainer;

    if (m_job && !m_job->sameTarget(next)) {
        const bool unfinished = m_job->state == JobState::Running || m_job->state == JobState::Listing
                                || m_job->state == JobState::Paused
                                || (m_job->state == JobState::Failed
                                    && std::any_of(m_job->files.begin(), m_job->files.end(),
                                                   [](const QueuedFile &f) { return f.onDisk > 0 && f.state != FileState::Done; }));
        if (unfinished) {
            const QString why = QStringLiteral("the download of %1 into %2 is unfinished: resume it or cancel it first")
                                    .arg(m_job->repo, m_job->dest);
            m_notice = why;
            emitSnapshot();
            Q_EMIT jobEnded(false, why);
            return;
        }
        m_job.reset();
    }
    if (m_job && (m_job->state == JobState::Running || m_job->state == JobState::Listing)) {
        emitSnapshot(); // already on its way
        return;
    }
    QString err;
    if (!makeEndpoint(next.endpoint, &err)) {
        m_notice = err;
        emitSnapshot();
        Q_EMIT jobEnded(false, err);
        return;
    }
    if (m_job) {
        next.files = std::move(m_job->files); // kept for the merge in onListed
    }
    m_job = std::move(next);
    m_job->state = JobState::Listing;
    m_job->reason.clear();
    if (m_lister) {
        m_lister->disconnect(this);
        m_lister->deleteLater();
    }
    m_lister = new HubLister(m_nam, m_endpoint, m_job->repo, m_job->revision, m_options, &m_rng, this);
    connect(m_lister, &HubLister::listed, this, [this, andStart](const QList<HubFile> &files) { onListed(files, andStart); });
    connect(m_lister, &HubLister::failed, this, [this](const QString &reason) {
        m_lister->deleteLater();
        endJob(JobState::Failed, reason, false);
    });
    connect(m_lister, &HubLister::retrying, this, [this](const QString &reason, qint64 ms) {
        Q_EMIT event(QString(), QStringLiteral("listing: retry in %1 s: %2").arg(ms / 1000.0, 0, 'f', 1).arg(reason));
        // On the page at once (offline, the hub unreachable): what failed and when it is
        // tried again, counting down, not an endless "Reading the file list…".
        m_listRetryReason = reason;
        m_listRetryAt = QDateTime::currentMSecsSinceEpoch() + ms;
        m_listRetryAttempt = m_lister ? m_lister->attempts() + 1 : 0;
        showListRetry();
    });
    m_lister->start();
    emitSnapshot();
}

void DownloadWorker::showListRetry()
{
    if (!m_job || m_job->state != JobState::Listing) {
        m_listRetryTick.stop();
        return;
    }
    const qint64 left = std::max<qint64>(0, m_listRetryAt - QDateTime::currentMSecsSinceEpoch());
    m_job->reason = left > 0 ? QStringLiteral("Could not read the file list: %1. Trying again in %2 s (attempt %3 of %4); Cancel stops.")
                                   .arg(m_listRetryReason)
                                   .arg((left + 999) / 1000)
                                   .arg(m_listRetryAttempt)
                                   .arg(m_options.maxAttempts)
                             : QStringLiteral("Could not read the file list: %1. Trying again now (attempt %2 of %3); Cancel stops.")
                                   .arg(m_listRetryReason)
                                   .arg(m_listRetryAttempt)
                                   .arg(m_options.maxAttempts);
    // Next when the whole seconds shown drop by one.
    if (left > 0)
        m_listRetryTick.start(int(left - ((left + 999) / 1000 - 1) * 1000) + 1);
    emitSnapshot();
}

void DownloadWorker::onListed(const QList<HubFile> &listed, bool andStart)
{
    m_listRetryTick.stop();
    if (m_lister)
        m_lister->deleteLater();
    if (!m_job)
        return;
    m_job->reason.clear(); // a listing retry's reason is history once the list came
    const QList<HubFile> files = hublisting::filter(listed, m_job->include);
    if (files.isEmpty()) {
        const QString why = listed.isEmpty()
                                ? QStringLiteral("%1 at %2 has no files").arg(m_job->repo, m_job->revision)
                                : QStringLiteral("none of the %1 files of %2 match %3").arg(listed.size()).arg(m_job->repo, m_job->include.join(QLatin1Char(' ')));
        m_job->files.clear();
        endJob(JobState::Failed, why, false);
        return;
    }
    std::vector<QueuedFile> merged;
    merged.reserve(files.size());
    QHash<QString, const QueuedFile *> old;
    for (const QueuedFile &f : m_job->files)
        old.insert(f.path, &f);
    for (const HubFile &h : files) {
        QueuedFile q;
        q.path = h.path;
        q.size = h.size;
        q.sha256 = h.sha256;
        q.gitOid = h.gitOid;
        if (const QueuedFile *prev = old.value(h.path)) {
            if (prev->sameContentAs(q)) {
                q = *prev;
            } else {
                // The file changed on the hub since the .part was started: it is of no use.
                QFile::remove(FileTransfer::partPathFor(m_job->dest, h.path));
                Q_EMIT event(h.path, QStringLiteral("changed on the hub since the last run; starting it from zero"));
            }
        }
        if (q.state == FileState::Active || q.state == FileState::Verifying)
            q.state = FileState::Pending;
        merged.push_back(q);
    }
    // Files no longer asked for (a narrower --include, or gone from the hub): no .part left behind.
    for (const QueuedFile &f : m_job->files)
        if (std::none_of(merged.begin(), merged.end(), [&](const QueuedFile &m) { return m.path == f.path; }))
            QFile::remove(FileTransfer::partPathFor(m_job->dest, f.path));
    m_job->files = std::move(merged);
    m_job->state = JobState::Ready;
    m_job->reason.clear();
    refreshDisk();
    m_space = computeSpace();
    saveNow();
    if (andStart)
        startJob();
    else
        emitSnapshot();
}

void DownloadWorker::refreshDisk()
{
    if (!m_job)
        return;
    for (QueuedFile &f : m_job->files) {
        const QFileInfo fin(FileTransfer::finalPathFor(m_job->dest, f.path));
        if (f.state == FileState::Done) {
            if (fin.isFile() && fin.size() == f.size && fin.lastModified().toMSecsSinceEpoch() == f.doneMtimeMs) {
                f.onDisk = f.size;
                continue;
            }
            f.state = FileState::Pending; // moved, changed or deleted since it was verified
            f.doneMtimeMs = 0;
        }
        const QFileInfo pin(FileTransfer::partPathFor(m_job->dest, f.path));
        f.onDisk = fin.isFile() && fin.size() == f.size ? f.size : (pin.exists() ? qMin(pin.size(), f.size) : 0);
    }
    m_lastTransferred.assign(m_job->files.size(), 0);
    m_speed.assign(m_job->files.size(), 0);
    for (size_t i = 0; i < m_job->files.size(); ++i)
        m_lastTransferred[i] = m_job->files[i].transferred;
}

SpaceCheck DownloadWorker::computeSpace() const
{
    SpaceCheck s;
    if (!m_job)
        return s;
    qint64 total = 0;
    for (const QueuedFile &f : m_job->files) {
        total += f.size;
        if (f.state != FileState::Done)
            s.downloadBytes += f.size - f.onDisk;
    }
    s.containerBytes = m_job->countContainer ? total : 0;
    if (m_job->countContainer && m_job->plannedContainerBytes >= 0) {
        s.containerBytes = m_job->plannedContainerBytes;
        s.containerPlanned = true;
    }
    QStorageInfo info(existingAncestor(m_job->dest));
    if (info.isValid()) {
        s.volume = info.rootPath();
        s.freeBytes = info.bytesAvailable();
    }
    return s;
}

void DownloadWorker::startJob()
{
    m_notice.clear();
    if (!m_job || m_job->state == JobState::Listing || m_job->files.empty())
        return;
    if (m_job->state == JobState::Running) {
        schedule();
        return;
    }
    refreshDisk();
    for (QueuedFile &f : m_job->files) {
        if (f.state == FileState::Done)
            continue;
        if (f.state == FileState::Failed) {
            f.attempts = 0;
            f.freshRetryUsed = false;
        }
        f.state = FileState::Pending;
        f.detail.clear();
    }
    m_space = computeSpace();
    if (!m_space.enough()) {
        const QString why = QStringLiteral("not enough free space: needs %1%2; %3 free on %4")
                                .arg(Units::bytes(m_space.downloadBytes),
                                     m_space.containerBytes > 0 ? QStringLiteral(" + %1 for the container (about the source size)")
                                                                      .arg(Units::bytes(m_space.containerBytes))
                                                                : QString(),
                                     Units::bytes(m_space.freeBytes), m_space.volume);
        endJob(JobState::Failed, why, false);
        return;
    }
    m_job->state = JobState::Running;
    m_job->reason.clear();
    QDir().mkpath(m_job->dest);
    saveNow();
    m_tickClock.restart();
    m_tick.start();
    schedule();
    emitSnapshot();
}

void DownloadWorker::schedule()
{
    if (!m_job || m_job->state != JobState::Running)
        return;
    for (int i = 0; i < static_cast<int>(m_job->files.size()) && m_transfers.size() < m_options.parallelFiles; ++i) {
        QueuedFile &f = m_job->files[i];
        if (f.state != FileState::Pending || m_transfers.contains(i))
            continue;
        // Re-check the disk before each file: space can go while a 1.4 TB download runs.
        QStorageInfo info(existingAncestor(m_job->dest));
        if (info.isValid() && info.bytesAvailable() >= 0 && info.bytesAvailable() < f.size - f.onDisk) {
            onDiskProblem(QStringLiteral("the disk is full: %1 needs %2 more, %3 free on %4")
                              .arg(f.path, Units::bytes(f.size - f.onDisk), Units::bytes(info.bytesAvailable()), info.rootPath()));
            return;
        }
        TransferContext ctx;
        ctx.nam = m_nam;
        ctx.endpoint = m_endpoint;
        ctx.repo = m_job->repo;
        ctx.revision = m_job->revision;
        ctx.dest = m_job->dest;
        ctx.options = m_options;
        ctx.limiter = &m_limiter;
        ctx.rng = &m_rng;
        auto *t = new FileTransfer(&f, ctx, this);
        m_transfers.insert(i, t);
        connect(t, &FileTransfer::changed, this, [this] {
            saveSoon();
            emitSoon();
        });
        connect(t, &FileTransfer::finished, this, [this, i] { onFileFinished(i); });
        connect(t, &FileTransfer::diskProblem, this, &DownloadWorker::onDiskProblem);
        connect(t, &FileTransfer::event, this, &DownloadWorker::event);
        t->start();
        if (!m_job || m_job->state != JobState::Running)
            return; // the start paused the job (disk problem)
    }
    if (m_transfers.isEmpty()) {
        const bool anyPending = std::any_of(m_job->files.begin(), m_job->files.end(),
                                            [](const QueuedFile &f) { return f.state == FileState::Pending; });
        if (anyPending)
            return;
        int failed = 0;
        QString first;
        for (const QueuedFile &f : m_job->files)
            if (f.state == FileState::Failed) {
                if (!failed)
                    first = f.path + QStringLiteral(": ") + f.reason;
                ++failed;
            }
        if (failed == 0)
            endJob(JobState::Done, {}, true);
        else
            endJob(JobState::Failed, QStringLiteral("%1 of %2 files failed (%3)").arg(failed).arg(m_job->files.size()).arg(first), false);
    }
}

void DownloadWorker::onFileFinished(int index)
{
    if (FileTransfer *t = m_transfers.take(index))
        t->deleteLater();
    saveSoon();
    emitSoon();
    // Queued: the transfer that finished may still be on the stack.
    QMetaObject::invokeMethod(this, &DownloadWorker::schedule, Qt::QueuedConnection);
}

void DownloadWorker::onDiskProblem(const QString &reason)
{
    if (!m_job)
        return;
    stopTransfers();
    for (QueuedFile &f : m_job->files)
        if (f.state == FileState::Active || f.state == FileState::Verifying)
            f.state = FileState::Paused;
    endJob(JobState::Paused, QStringLiteral("paused: %1").arg(reason), false);
}

void DownloadWorker::endJob(JobState state, const QString &reason, bool ok)
{
    if (!m_job)
        return;
    m_tick.stop();
    m_listRetryTick.stop();
    m_job->state = state;
    m_job->reason = reason;
    if (state == JobState::Done)
        planContainer();
    m_space = computeSpace();
    saveNow();
    emitSnapshot();
    Q_EMIT jobEnded(ok, ok ? QStringLiteral("all %1 files of %2 verified in %3").arg(m_job->files.size()).arg(m_job->repo, m_job->dest)
                           : reason);
}

void DownloadWorker::planContainer()
{
    // Every file is here: the container's size is the converter's own plan for this source,
    // the figure the Convert page shows (the source size is only a bound before that).
    if (!m_job || !m_job->countContainer)
        return;
    try {
        const QString out = QDir::cleanPath(m_job->dest) + QStringLiteral(".waste");
        m_job->plannedContainerBytes = waste::planConversion(m_job->dest.toStdString(), out.toStdString(), {}).outputBytes;
    } catch (const std::exception &) {
        m_job->plannedContainerBytes = -1; // not a model the converter reads: keep the bound
    }
}

void DownloadWorker::stopTransfers()
{
    // deleteLater: this may run inside one of the transfers' own signals (a write failure).
    for (FileTransfer *t : std::as_const(m_transfers)) {
        t->disconnect(this);
        t->stop();
        t->deleteLater();
    }
    m_transfers.clear();
}

void DownloadWorker::pause()
{
    if (!m_job || (m_job->state != JobState::Running && m_job->state != JobState::Ready))
        return;
    stopTransfers();
    m_tick.stop();
    for (QueuedFile &f : m_job->files)
        if (f.state == FileState::Active || f.state == FileState::Verifying || f.state == FileState::Pending) {
            f.state = FileState::Paused;
            f.detail.clear();
        }
    m_job->state = JobState::Paused;
    m_job->reason.clear();
    refreshDisk();
    saveNow();
    emitSnapshot();
}

void DownloadWorker::cancel()
{
    if (m_lister) {
        m_lister->disconnect(this);
        m_lister->deleteLater();
    }
    stopTransfers();
    m_tick.stop();
    if (m_job)
        for (const QueuedFile &f : m_job->files)
            QFile::remove(FileTransfer::partPathFor(m_job->dest, f.path));
    m_job.reset();
    m_space = {};
    downloadqueue::remove(m_queuePath);
    emitSnapshot();
}

void DownloadWorker::retryFailed()
{
    if (!m_job)
        return;
    if (m_job->files.empty() && m_job->state == JobState::Failed) {
        // The file list itself could not be read: ask for it again, from the start.
        JobSpec spec;
        spec.repo = m_job->repo;
        spec.revision = m_job->revision;
        spec.endpoint = m_job->endpoint;
        spec.dest = m_job->dest;
        spec.include = m_job->include;
        spec.countContainer = m_job->countContainer;
        prepare(spec, true);
        return;
    }
    for (QueuedFile &f : m_job->files)
        if (f.state == FileState::Failed) {
            f.state = FileState::Pending;
            f.attempts = 0;
            f.freshRetryUsed = false;
        }
    if (m_job->state == JobState::Running)
        schedule();
    else
        startJob();
}

void DownloadWorker::setParallel(int n)
{
    m_options.parallelFiles = qBound(1, n, 4);
    schedule();
}

void DownloadWorker::setBandwidthLimit(qint64 bytesPerSecond)
{
    m_options.bandwidthLimit = qMax<qint64>(0, bytesPerSecond);
    m_limiter.setRate(m_options.bandwidthLimit);
}

void DownloadWorker::setToken(const QString &token)
{
    m_token = token;
    if (m_job) {
        QString err;
        makeEndpoint(m_job->endpoint, &err);
    }
}

void DownloadWorker::shutdown()
{
    if (m_lister)
        delete m_lister.data();
    stopTransfers();
    m_tick.stop();
    if (m_saveTimer.isActive() || m_job)
        saveNow();
}

void DownloadWorker::saveSoon()
{
    if (!m_saveTimer.isActive())
        m_saveTimer.start();
}

void DownloadWorker::saveNow()
{
    m_saveTimer.stop();
    if (!m_job || m_job->files.empty() || m_queuePath.isEmpty())
        return;
    QString err;
    if (!downloadqueue::save(m_queuePath, *m_job, &err))
        Q_EMIT event(QString(), err);
}

void DownloadWorker::emitSoon()
{
    if (!m_emitTimer.isActive())
        m_emitTimer.start();
}

void DownloadWorker::emitSnapshot(bool updateRates)
{
    m_emitTimer.stop();
    DownloadSnapshot s;
    s.reason = m_notice;
    if (!m_job) {
        Q_EMIT snapshotReady(s);
        return;
    }
    const double dt = updateRates ? qMax<qint64>(1, m_tickClock.restart()) / 1000.0 : 0;
    s.hasJob = true;
    s.state = m_job->state;
    s.unfinished = m_job->state == JobState::Listing || m_job->state == JobState::Running || m_job->state == JobState::Paused;
    if (m_notice.isEmpty())
        s.reason = m_job->reason; // a refusal of the last action (the notice) is shown first
    s.repo = m_job->repo;
    s.revision = m_job->revision;
    s.endpoint = m_job->endpoint;
    s.dest = m_job->dest;
    if (m_lastTransferred.size() != m_job->files.size()) {
        m_lastTransferred.assign(m_job->files.size(), 0);
        m_speed.assign(m_job->files.size(), 0);
    }
    const bool running = m_job->state == JobState::Running;
    s.files.reserve(static_cast<qsizetype>(m_job->files.size()));
    qint64 remaining = 0;
    for (size_t i = 0; i < m_job->files.size(); ++i) {
        const QueuedFile &f = m_job->files[i];
        FileSnapshot fs;
        fs.path = f.path;
        fs.size = f.size;
        fs.state = f.state;
        fs.reason = f.reason;
        fs.detail = f.detail;
        fs.checksum = !f.sha256.isEmpty() ? QStringLiteral("sha256") : !f.gitOid.isEmpty() ? QStringLiteral("git sha1") : QStringLiteral("size only");
        fs.onDisk = f.onDisk;
        fs.transferred = f.transferred;
        fs.retries = f.retries;
        if (FileTransfer *t = m_transfers.value(static_cast<int>(i)))
            fs.verified = t->verifiedBytes();
        // Speed: exponential moving average of the bytes taken per tick.
        if (updateRates) {
            const qint64 delta = f.transferred - m_lastTransferred[i];
            m_lastTransferred[i] = f.transferred;
            m_speed[i] = f.state == FileState::Active ? 0.7 * m_speed[i] + 0.3 * (qMax<qint64>(0, delta) / dt) : 0;
        }
        fs.speed = m_speed[i];
        if (fs.speed > 1 && f.state == FileState::Active)
            fs.etaSeconds = static_cast<qint64>((f.size - f.onDisk) / fs.speed);
        s.totalBytes += f.size;
        s.doneBytes += f.onDisk;
        s.transferredBytes += f.transferred;
        s.retries += f.retries;
        if (f.state == FileState::Done)
            ++s.doneFiles;
        else {
            remaining += f.size - f.onDisk;
            if (f.state == FileState::Failed)
                ++s.failedFiles;
        }
        s.files.append(fs);
    }
    if (updateRates) {
        const qint64 delta = s.transferredBytes - m_lastTotalTransferred;
        m_lastTotalTransferred = s.transferredBytes;
        m_totalSpeed = running ? 0.7 * m_totalSpeed + 0.3 * (qMax<qint64>(0, delta) / dt) : 0;
    }
    if (!running)
        m_totalSpeed = 0;
    s.speed = m_totalSpeed;
    if (running && m_totalSpeed > 1)
        s.etaSeconds = static_cast<qint64>(remaining / m_totalSpeed);
    if (!running)
        m_space = computeSpace();
    s.space = m_space;
    Q_EMIT snapshotReady(s);
}
