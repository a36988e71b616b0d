#include "download/filetransfer.h"

#include "download/hubrequest.h"
#include "download/resumerules.h"
#include "threads/threadpriority.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QtConcurrent/QtConcurrentRun>

namespace {
// Under a bandwidth limit the reply's buffer is bounded so that throttled reads back-pressure
// TCP. Without one we drain every readyRead at once, and an unbounded buffer lets Qt take all
// bytes already received before it reports a closed connection (a cap makes it drop them).
constexpr qint64 kThrottledReadBuffer = 512 * 1024;
constexpr qint64 kChunk = 1 << 20;

QString seconds(qint64 ms)
{
    return ms < 10000 ? QString::number(ms / 1000.0, 'f', 1) + QStringLiteral(" s") : QString::number(ms / 1000) + QStringLiteral(" s");
}
} // namespace

FileTransfer::FileTransfer(QueuedFile *file, const TransferContext &ctx, QObject *parent)
    : QObject(parent), m_file(file), m_ctx(ctx), m_finalPath(finalPathFor(ctx.dest, file->path)),
      m_partPath(partPathFor(ctx.dest, file->path)), m_part(m_partPath)
{
    m_stallTimer.setSingleShot(true);
    m_stallTimer.setInterval(m_ctx.options.stallMs);
    connect(&m_stallTimer, &QTimer::timeout, this, &FileTransfer::onStall);
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, [this] { sendRequest(fileUrl(), 0); });
    m_pumpTimer.setSingleShot(true);
    m_pumpTimer.setInterval(BandwidthLimiter::wakeMs());
    connect(&m_pumpTimer, &QTimer::timeout, this, &FileTransfer::pump);
    connect(&m_hashWatcher, &QFutureWatcherBase::finished, this, &FileTransfer::onHashed);
}

FileTransfer::~FileTransfer()
{
    stop();
}

QUrl FileTransfer::fileUrl() const
{
    return m_ctx.endpoint.fileUrl(m_ctx.repo, m_ctx.revision, m_file->path);
}

FileChecksum FileTransfer::newChecksum() const
{
    if (!m_file->sha256.isEmpty())
        return FileChecksum(FileChecksum::Sha256, m_file->sha256, m_file->size);
    if (!m_file->gitOid.isEmpty())
        return FileChecksum(FileChecksum::GitSha1, m_file->gitOid, m_file->size);
    return FileChecksum(FileChecksum::None, {}, m_file->size);
}

void FileTransfer::setState(FileState s, const QString &detail)
{
    m_file->state = s;
    m_file->detail = detail;
    Q_EMIT changed();
}

void FileTransfer::start()
{
    m_stopped = false;
    setState(FileState::Active, QStringLiteral("starting"));
    examineDisk();
}

void FileTransfer::stop()
{
    m_stopped = true;
    m_retryTimer.stop();
    dropReply();
    if (m_cancelHash)
        m_cancelHash->store(true);
    if (m_part.isOpen()) {
        m_part.flush();
        m_part.close();
    }
}

void FileTransfer::examineDisk()
{
    const qint64 size = m_file->size;
    const QFileInfo fin(m_finalPath);
    if (fin.exists()) {
        if (fin.isFile() && fin.size() == size) {
            if (m_file->doneMtimeMs != 0 && fin.lastModified().toMSecsSinceEpoch() == m_file->doneMtimeMs) {
                finishDone(m_file->reason);
                return;
            }
            setState(FileState::Verifying, QStringLiteral("checking the file already here"));
            hashOnPool(m_finalPath, size, HashPurpose::VerifyFinal);
            return;
        }
        Q_EMIT event(m_file->path, QStringLiteral("the file already here has the wrong size (%1, listing says %2); replacing it")
                                       .arg(fin.size()).arg(size));
        QFile::remove(m_finalPath);
    }
    QDir().mkpath(QFileInfo(m_partPath).absolutePath());
    const QFileInfo pin(m_partPath);
    qint64 have = pin.exists() ? pin.size() : 0;
    if (have > size) {
        Q_EMIT event(m_file->path, QStringLiteral("the .part is longer than the file; starting from zero"));
        QFile::remove(m_partPath);
        have = 0;
    }
    m_file->onDisk = have;
    if (have > 0 && have == size) {
        setState(FileState::Verifying, QStringLiteral("checking the complete .part"));
        hashOnPool(m_partPath, size, HashPurpose::VerifyPart);
        return;
    }
    if (have > 0) {
        setState(FileState::Verifying, QStringLiteral("checking the part already downloaded"));
        hashOnPool(m_partPath, have, HashPurpose::ResumePart);
        return;
    }
    m_file->etag.clear(); // nothing on disk: an old validator means nothing
    m_sum = newChecksum();
    m_written = 0;
    setState(FileState::Active, QStringLiteral("connecting"));
    sendRequest(fileUrl(), 0);
}

void FileTransfer::hashOnPool(const QString &path, qint64 n, HashPurpose purpose)
{
    m_hashPurpose = purpose;
    m_cancelHash = std::make_shared<std::atomic<bool>>(false);
    m_hashProgress = std::make_shared<std::atomic<qint64>>(0);
    auto sum = std::make_shared<FileChecksum>(newChecksum());
    auto cancel = m_cancelHash;
    auto progress = m_hashProgress;
    m_hashWatcher.setFuture(QtConcurrent::run([path, n, sum, cancel, progress]() {
        setCurrentThreadRole(ThreadRole::Background); // a pool thread: it stays lowered, which suits the pool's other jobs too
        HashOutcome o;
        o.sum = sum;
        o.ok = sum->addFilePrefix(path, n, cancel.get(), &o.error, progress.get());
        return o;
    }));
}

void FileTransfer::onHashed()
{
    if (m_stopped)
        return;
    HashOutcome o = m_hashWatcher.result();
    const qint64 hashed = m_hashProgress ? m_hashProgress->load() : 0;
    m_hashProgress.reset();
    if (!o.ok) {
        Q_EMIT event(m_file->path, QStringLiteral("%1; starting from zero").arg(o.error));
        if (m_hashPurpose == HashPurpose::VerifyFinal)
            QFile::remove(m_finalPath);
        else
            QFile::remove(m_partPath);
        m_file->etag.clear();
        m_file->onDisk = 0;
        m_sum = newChecksum();
        m_written = 0;
        setState(FileState::Active, QStringLiteral("connecting"));
        sendRequest(fileUrl(), 0);
        return;
    }
    m_sum = std::move(*o.sum);
    switch (m_hashPurpose) {
    case HashPurpose::ResumePart:
        m_written = hashed;
        setState(FileState::Active, QStringLiteral("resuming at byte %1").arg(m_written));
        sendRequest(fileUrl(), 0);
        return;
    case HashPurpose::VerifyPart:
        m_written = m_file->size;
        verifyAndCommit();
        return;
    case HashPurpose::VerifyFinal: {
        const QString actual = m_sum.result();
        if (m_sum.matches(actual)) {
            finishDone(m_sum.kind() == FileChecksum::None ? QStringLiteral("size checked (the hub gave no checksum for this file)") : QString());
            return;
        }
        Q_EMIT event(m_file->path, QStringLiteral("the file already here does not match its %1; downloading it again").arg(m_sum.kindName()));
        QFile::remove(m_finalPath);
        examineDisk();
        return;
    }
    }
}

void FileTransfer::sendRequest(const QUrl &url, int hop)
{
    if (m_stopped)
        return;
    dropReply();
    m_offset = m_written;
    m_attemptBytes = hop == 0 ? 0 : m_attemptBytes;
    m_headersDone = false;
    m_accepting = false;
    QNetworkRequest req = hubrequest::make(url, m_ctx.endpoint);
    if (m_offset > 0) {
        req.setRawHeader("Range", "bytes=" + QByteArray::number(m_offset) + '-');
        if (resumerules::isStrongEtag(m_file->etag))
            req.setRawHeader("If-Range", m_file->etag);
    }
    req.setAttribute(QNetworkRequest::User, hop);
    // GET sent as a "custom" verb: Qt then treats it as non-idempotent and never re-sends it on
    // its own after a connection drops mid-body (which would fetch bytes twice behind our back
    // and could append a second response to the first). Retries are ours alone.
    QNetworkReply *reply = m_ctx.nam->sendCustomRequest(req, "GET");
    reply->setReadBufferSize(m_ctx.limiter && m_ctx.limiter->rate() > 0 ? kThrottledReadBuffer : 0);
    m_reply = reply;
    connect(reply, &QNetworkReply::metaDataChanged, this, &FileTransfer::handleHeaders);
    connect(reply, &QNetworkReply::readyRead, this, &FileTransfer::pump);
    connect(reply, &QNetworkReply::finished, this, &FileTransfer::onReplyFinished);
    connect(reply, &QNetworkReply::downloadProgress, this, [this] { m_stallTimer.start(); });
    m_stallTimer.start();
}

void FileTransfer::dropReply()
{
    m_stallTimer.stop();
    m_pumpTimer.stop();
    if (m_reply) {
        QNetworkReply *r = m_reply;
        m_reply = nullptr;
        r->disconnect(this);
        if (r->isFinished()) {
            r->deleteLater();
        } else if (r->error() != QNetworkReply::NoError) {
            // An error status (4xx/5xx) is already recorded: aborting now would record a second
            // error. Its short body is left to finish on its own.
            connect(r, &QNetworkReply::finished, r, &QObject::deleteLater);
        } else {
            r->abort();
            r->deleteLater();
        }
    }
    m_accepting = false;
    m_headersDone = false;
}

bool FileTransfer::openPart(bool truncate)
{
    if (!m_part.isOpen()) {
        QDir().mkpath(QFileInfo(m_partPath).absolutePath());
        if (!m_part.open(QIODevice::ReadWrite)) {
            const QString why = QStringLiteral("cannot write %1: %2").arg(m_partPath, m_part.errorString());
            dropReply();
            setState(FileState::Paused, {});
            m_file->reason = why;
            Q_EMIT diskProblem(why);
            return false;
        }
    }
    const qint64 at = truncate ? 0 : m_written;
    if (m_part.size() != at)
        m_part.resize(at);
    m_part.seek(at);
    return true;
}

void FileTransfer::handleHeaders()
{
    QNetworkReply *reply = m_reply;
    if (m_headersDone || !reply)
        return;
    const QVariant st = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!st.isValid())
        return;
    m_headersDone = true;
    const int hop = reply->request().attribute(QNetworkRequest::User).toInt();

    resumerules::ResponseFacts facts;
    facts.status = st.toInt();
    facts.offset = m_offset;
    facts.expectedSize = m_file->size;
    facts.contentRange = reply->rawHeader("Content-Range");
    facts.contentLength = reply->rawHeader("Content-Length");
    facts.etag = reply->rawHeader("ETag");
    facts.knownEtag = m_file->etag;
    facts.hasLocation = reply->hasRawHeader("Location");
    // An error status: Qt records its own error as the reply finishes. Decide then, so that we
    // never abort a reply Qt is failing (and do not cut its short body).
    if (facts.status >= 400 && !reply->isFinished()) {
        m_headersDone = false;
        return;
    }
    const resumerules::Decision d = resumerules::classify(facts);

    switch (d.verdict) {
    case resumerules::Verdict::Redirect: {
        QString why;
        const QUrl target = hubrequest::redirectTarget(reply, &why);
        if (target.isEmpty()) {
            dropReply();
            fail(QStringLiteral("the hub answered with %1").arg(why));
            return;
        }
        if (hop >= m_ctx.options.maxRedirects) {
            dropReply();
            fail(QStringLiteral("more than %1 redirects").arg(m_ctx.options.maxRedirects));
            return;
        }
        sendRequest(target, hop + 1);
        return;
    }
    case resumerules::Verdict::Append:
        if (!openPart(false))
            return;
        if (!facts.etag.isEmpty())
            m_file->etag = facts.etag.trimmed();
        m_accepting = true;
        setState(FileState::Active, m_offset > 0 ? QStringLiteral("resumed at byte %1").arg(m_offset) : QString());
        break;
    case resumerules::Verdict::FromZero:
        if (m_offset > 0) {
            Q_EMIT event(m_file->path, d.reason);
            m_file->reason = d.reason;
        }
        m_written = 0;
        m_offset = 0;
        m_file->onDisk = 0;
        m_sum = newChecksum();
        if (!openPart(true))
            return;
        m_file->etag = facts.etag.trimmed();
        m_accepting = true;
        setState(FileState::Active, QString());
        break;
    case resumerules::Verdict::Verify:
        dropReply();
        verifyAndCommit();
        return;
    case resumerules::Verdict::RestartFresh:
        if (m_offset == 0) {
            dropReply();
            retryLater(d.reason, -1);
        } else {
            restartFresh(d.reason);
        }
        return;
    case resumerules::Verdict::RetryLater: {
        const auto after = resumerules::parseRetryAfter(reply->rawHeader("Retry-After"), QDateTime::currentDateTimeUtc());
        dropReply();
        retryLater(d.reason, after ? *after : -1);
        return;
    }
    case resumerules::Verdict::Fail:
        dropReply();
        fail(d.reason);
        return;
    }
    pump();
}

void FileTransfer::pump()
{
    QNetworkReply *reply = m_reply;
    if (!reply || !m_accepting)
        return;
    while (reply->bytesAvailable() > 0) {
        const qint64 want = qMin<qint64>(reply->bytesAvailable(), kChunk);
        const qint64 allowed = m_ctx.limiter ? m_ctx.limiter->take(want) : want;
        if (allowed <= 0) {
            if (!m_pumpTimer.isActive())
                m_pumpTimer.start();
            return;
        }
        const QByteArray chunk = reply->read(allowed);
        if (chunk.isEmpty())
            break;
        if (m_written + chunk.size() > m_file->size) {
            dropReply();
            m_part.close();
            QFile::remove(m_partPath);
            m_written = 0;
            m_file->onDisk = 0;
            m_file->etag.clear();
            m_sum = newChecksum();
            retryLater(QStringLiteral("the server sent more than the %1 bytes the listing gives").arg(m_file->size), -1);
            return;
        }
        if (m_part.write(chunk) != chunk.size()) {
            const QString why = QStringLiteral("cannot write %1: %2").arg(m_partPath, m_part.errorString());
            dropReply();
            m_part.close();
            m_file->reason = why;
            setState(FileState::Paused, {});
            Q_EMIT diskProblem(why);
            return;
        }
        m_sum.addData(chunk.constData(), chunk.size());
        // Bytes flow again: why an earlier attempt stopped is history, not this file's state
        // (the file table would otherwise keep "connection reset" beside a moving bar).
        if (m_attemptBytes == 0)
            m_file->reason.clear();
        m_written += chunk.size();
        m_attemptBytes += chunk.size();
        m_file->transferred += chunk.size();
        m_file->onDisk = m_written;
        m_stallTimer.start();
    }
    if (m_reply == reply && reply->isFinished() && reply->bytesAvailable() == 0)
        onReplyFinished();
}

void FileTransfer::onReplyFinished()
{
    QNetworkReply *reply = m_reply;
    if (!reply)
        return;
    if (!m_headersDone) {
        handleHeaders();
        if (m_reply != reply)
            return; // answered: redirected, retried or failed
    }
    if (m_accepting && reply->bytesAvailable() > 0) {
        pump(); // throttled: pump() comes back here once the buffer is drained
        return;
    }
    const QString err = hubrequest::describeError(reply);
    const bool accepted = m_accepting;
    dropReply();
    if (!accepted) {
        retryLater(err.isEmpty() ? QStringLiteral("no usable answer") : err, -1);
        return;
    }
    if (m_written == m_file->size) {
        verifyAndCommit();
        return;
    }
    if (m_part.isOpen())
        m_part.flush();
    retryLater(QStringLiteral("%1 at byte %2 of %3").arg(err.isEmpty() ? QStringLiteral("the body ended early") : err)
                   .arg(m_written).arg(m_file->size),
               -1);
}

void FileTransfer::onStall()
{
    if (!m_reply)
        return;
    if (m_reply->bytesAvailable() > 0) { // we are the ones holding back (bandwidth limit)
        m_stallTimer.start();
        return;
    }
    dropReply();
    if (m_part.isOpen())
        m_part.flush();
    retryLater(QStringLiteral("stalled: no data for %1").arg(seconds(m_ctx.options.stallMs)), -1);
}

void FileTransfer::retryLater(const QString &reason, qint64 retryAfterMs)
{
    if (m_stopped)
        return;
    if (m_part.isOpen())
        m_part.flush();
    const bool progressed = m_attemptBytes > 0;
    m_file->attempts = progressed ? 1 : m_file->attempts + 1;
    m_file->reason = reason;
    if (m_file->attempts >= m_ctx.options.maxAttempts) {
        fail(QStringLiteral("%1 (gave up after %2 tries in a row without progress)").arg(reason).arg(m_file->attempts));
        return;
    }
    ++m_file->retries;
    const qint64 delay = retryAfterMs >= 0
                             ? qMin<qint64>(retryAfterMs, m_ctx.options.retryAfterCapMs)
                             : resumerules::backoffMs(m_file->attempts, m_ctx.options.backoffBaseMs, m_ctx.options.backoffMaxMs, *m_ctx.rng);
    setState(FileState::Active, QStringLiteral("retry %1 in %2 after: %3").arg(m_file->retries).arg(seconds(delay), reason));
    Q_EMIT event(m_file->path, QStringLiteral("retry %1 in %2: %3").arg(m_file->retries).arg(seconds(delay), reason));
    m_retryTimer.start(static_cast<int>(qMin<qint64>(delay, INT_MAX)));
}

void FileTransfer::restartFresh(const QString &reason)
{
    dropReply();
    if (m_part.isOpen())
        m_part.close();
    QFile::remove(m_partPath);
    m_written = 0;
    m_file->onDisk = 0;
    m_file->etag.clear();
    m_sum = newChecksum();
    ++m_file->retries;
    m_file->reason = reason;
    Q_EMIT event(m_file->path, reason);
    setState(FileState::Active, QStringLiteral("starting again from zero"));
    sendRequest(fileUrl(), 0);
}

void FileTransfer::verifyAndCommit()
{
    m_stallTimer.stop();
    if (m_part.isOpen()) {
        m_part.flush();
        m_part.close();
    }
    const QString actual = m_sum.result();
    if (!m_sum.matches(actual)) {
        QFile::remove(m_partPath);
        m_written = 0;
        m_file->onDisk = 0;
        m_file->etag.clear();
        const QString what = QStringLiteral("%1 mismatch (expected %2, got %3)").arg(m_sum.kindName(), m_sum.expected(), actual);
        if (!m_file->freshRetryUsed) {
            m_file->freshRetryUsed = true;
            ++m_file->retries;
            m_file->reason = what + QStringLiteral("; downloading again from zero");
            Q_EMIT event(m_file->path, m_file->reason);
            m_sum = newChecksum();
            setState(FileState::Active, QStringLiteral("downloading again after a checksum mismatch"));
            sendRequest(fileUrl(), 0);
            return;
        }
        fail(what + QStringLiteral(" again after a fresh download; the .part was deleted. The hub's copy or its listing is wrong: "
                                   "try later or tell the repository's owners"));
        return;
    }
    if (QFileInfo::exists(m_finalPath))
        QFile::remove(m_finalPath);
    if (!QFile::rename(m_partPath, m_finalPath)) {
        fail(QStringLiteral("verified, but cannot rename %1 into place").arg(m_partPath));
        return;
    }
    finishDone(m_sum.kind() == FileChecksum::None ? QStringLiteral("size checked (the hub gave no checksum for this file)") : QString());
}

void FileTransfer::finishDone(const QString &note)
{
    m_stallTimer.stop();
    m_file->doneMtimeMs = QFileInfo(m_finalPath).lastModified().toMSecsSinceEpoch();
    m_file->onDisk = m_file->size;
    m_file->attempts = 0;
    m_file->freshRetryUsed = false;
    m_file->reason = note;
    m_file->etag.clear();
    setState(FileState::Done, {});
    Q_EMIT event(m_file->path, QStringLiteral("verified (%1)").arg(newChecksum().kindName()));
    Q_EMIT finished();
}

void FileTransfer::fail(const QString &reason)
{
    dropReply();
    if (m_part.isOpen()) {
        m_part.flush();
        m_part.close();
    }
    m_file->reason = reason;
    setState(FileState::Failed, {});
    Q_EMIT event(m_file->path, QStringLiteral("failed: %1").arg(reason));
    Q_EMIT finished();
}
