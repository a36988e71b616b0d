// DownloadManager against FaultyHub, a loopback hub that injects every fault a long download
// meets: connections cut mid-body, 503 and 429 with Retry-After, a stall longer than the stall
// timeout, a 200 answer to a ranged request, a wrong byte, a server restart. Every file must
// end verified, and no byte range may be downloaded twice except where a fault forced it.
#include "download/downloadmanager.h"
#include "faultyhub.h"
#include "download/filetransfer.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QCryptographicHash>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QString kRepo = QStringLiteral("test/faulty");

DownloadOptions fastOptions()
{
    DownloadOptions o;
    o.parallelFiles = 3;
    o.stallMs = 500;
    o.backoffBaseMs = 40;
    o.backoffMaxMs = 400;
    o.maxAttempts = 30;
    return o;
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList partFiles(const QString &dir)
{
    QStringList out;
    QDirIterator it(dir, {QStringLiteral("*.part")}, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext())
        out << it.next();
    return out;
}

const FileSnapshot *fileIn(const DownloadSnapshot &s, const QString &path)
{
    for (const FileSnapshot &f : s.files)
        if (f.path == path)
            return &f;
    return nullptr;
}

struct Run {
    bool ended = false;
    bool ok = false;
    QString summary;
};

// Starts the job and spins the event loop (the hub lives on this thread) until it ends.
Run runJob(DownloadManager &m, const JobSpec &spec, int timeoutMs)
{
    QSignalSpy finished(&m, &DownloadManager::finished);
    m.startJob(spec);
    Run r;
    r.ended = finished.wait(timeoutMs);
    if (r.ended) {
        r.ok = finished.first().at(0).toBool();
        r.summary = finished.first().at(1).toString();
    }
    QTest::qWait(50); // the final snapshot
    return r;
}
} // namespace

class TestDownload : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    qint64 m_transferredTotal = 0;
    qint64 m_neededTotal = 0;

    DownloadManager::Config config(const QString &name, const DownloadOptions &o = fastOptions())
    {
        DownloadManager::Config c;
        c.queuePath = m_tmp.filePath(name + QStringLiteral("/queue.json"));
        c.modelsFolder = m_tmp.filePath(name + QStringLiteral("/models"));
        c.options = o;
        c.autoResume = false;
        return c;
    }

    JobSpec spec(const FaultyHub &hub, const QString &name)
    {
        JobSpec s;
        s.repo = kRepo;
        s.endpoint = hub.endpoint();
        s.dest = m_tmp.filePath(name + QStringLiteral("/dest"));
        s.countContainer = false;
        return s;
    }

    void account(qint64 transferred, qint64 needed)
    {
        m_transferredTotal += transferred;
        m_neededTotal += needed;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        qunsetenv("HF_TOKEN");
    }

    void cleanupTestCase()
    {
        std::printf("bytes transferred / bytes needed: %lld / %lld (%.3f)\n", static_cast<long long>(m_transferredTotal),
                    static_cast<long long>(m_neededTotal), m_neededTotal ? double(m_transferredTotal) / m_neededTotal : 0.0);
    }

    void everyFaultEndsVerified()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        using F = FaultyHub::Fault;
        hub.addFile(kRepo, QStringLiteral("config.json"), FaultyHub::randomContent(600, 1), false);
        hub.addFile(kRepo, QStringLiteral("sub/tokenizer.model"), FaultyHub::randomContent(300000, 2));
        hub.addFile(kRepo, QStringLiteral("cut.safetensors"), FaultyHub::randomContent(3000000, 3));
        hub.addFault(QStringLiteral("cut.safetensors"), {F::CutAfter, 700000, 0, -1, 0, 0});
        hub.addFault(QStringLiteral("cut.safetensors"), {F::CutAfter, 500000, 0, -1, 0, 700000});
        hub.addFile(kRepo, QStringLiteral("busy.safetensors"), FaultyHub::randomContent(2000000, 4));
        hub.addFault(QStringLiteral("busy.safetensors"), {F::Status, 0, 503, 1});
        hub.addFault(QStringLiteral("busy.safetensors"), {F::Status, 0, 429, 1});
        hub.addFile(kRepo, QStringLiteral("stall.safetensors"), FaultyHub::randomContent(2000000, 5));
        hub.addFault(QStringLiteral("stall.safetensors"), {F::Stall, 400000, 0, -1, 5000});
        hub.addFile(kRepo, QStringLiteral("norange.safetensors"), FaultyHub::randomContent(2000000, 6));
        hub.addFault(QStringLiteral("norange.safetensors"), {F::CutAfter, 600000, 0, -1, 0, 0});
        hub.addFault(QStringLiteral("norange.safetensors"), {F::IgnoreRange, 0, 0, -1, 0, 600000});
        hub.addFile(kRepo, QStringLiteral("corrupt.safetensors"), FaultyHub::randomContent(2000000, 7));
        hub.addFault(QStringLiteral("corrupt.safetensors"), {F::CorruptByte, 1234567});

        DownloadManager m(config(QStringLiteral("faults")), nullptr);
        QAbstractItemModelTester tester(m.files(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QStringList events;
        connect(&m, &DownloadManager::event, this, [&](const QString &p, const QString &msg) { events << p + QStringLiteral(": ") + msg; });
        const JobSpec s = spec(hub, QStringLiteral("faults"));
        QElapsedTimer clock;
        clock.start();
        const Run r = runJob(m, s, 45000);
        QVERIFY2(r.ended, "the download did not finish");
        QVERIFY2(r.ok, qPrintable(r.summary + QLatin1Char('\n') + events.join(QLatin1Char('\n'))));
        QCOMPARE(m.state(), JobState::Done);
        QCOMPARE(m.files()->rowCount(), 7);

        const DownloadSnapshot snap = m.snapshot();
        if (qEnvironmentVariableIsSet("WASTE_TEST_VERBOSE")) {
            for (const FaultyHub::Served &x : hub.log())
                qInfo("%lld ms %s range=%s start=%lld sent=%lld status=%d", static_cast<long long>(x.atMs), qPrintable(x.path),
                      x.range.constData(), static_cast<long long>(x.rangeStart), static_cast<long long>(x.bytesSent), x.status);
            for (const QString &e : events)
                qInfo("%s", qPrintable(e));
        }
        for (const QString &path : hub.paths(kRepo)) {
            const QByteArray want = hub.content(kRepo, path);
            const QByteArray got = readAll(s.dest + QLatin1Char('/') + path);
            QVERIFY2(got == want, qPrintable(path));
            const FileSnapshot *f = fileIn(snap, path);
            QVERIFY(f);
            QCOMPARE(f->state, FileState::Done);
            qint64 forced = 0;
            if (path == QLatin1String("norange.safetensors"))
                forced = 600000; // the 200 answer forced the first 600000 bytes again
            if (path == QLatin1String("corrupt.safetensors"))
                forced = want.size(); // one full retry after the checksum mismatch
            QVERIFY2(f->transferred == want.size() + forced,
                     qPrintable(QStringLiteral("%1: transferred %2, size %3, forced %4").arg(path).arg(f->transferred).arg(want.size()).arg(forced)));
            account(f->transferred, want.size());
        }
        QVERIFY2(partFiles(s.dest).isEmpty(), qPrintable(partFiles(s.dest).join(QLatin1Char(' '))));

        // Each resumed request started exactly where the bytes on disk ended. (Qt may also re-send
        // a request by itself after a connection drops; we abort those at once, so the hub's
        // log can hold such a short duplicate. What we write is counted in `transferred` above.)
        const auto startsOf = [&](const QString &path) {
            QList<qint64> out;
            for (const FaultyHub::Served &x : hub.logFor(path))
                out << x.rangeStart;
            return out;
        };
        QVERIFY(startsOf(QStringLiteral("cut.safetensors")).contains(700000));
        QVERIFY(startsOf(QStringLiteral("cut.safetensors")).contains(1200000));
        QCOMPARE(hub.logFor(QStringLiteral("cut.safetensors")).last().status, 206);
        QCOMPARE(hub.logFor(QStringLiteral("stall.safetensors")).last().rangeStart, 400000);
        QCOMPARE(hub.logFor(QStringLiteral("stall.safetensors")).last().status, 206);
        // Retry-After: 1 was honoured both times.
        const auto busy = hub.logFor(QStringLiteral("busy.safetensors"));
        QCOMPARE(busy.size(), 3);
        QVERIFY2(busy[1].atMs - busy[0].atMs >= 950, qPrintable(QString::number(busy[1].atMs - busy[0].atMs)));
        QVERIFY2(busy[2].atMs - busy[1].atMs >= 950, qPrintable(QString::number(busy[2].atMs - busy[1].atMs)));
        // The corrupt file was fetched again from zero, once.
        const auto corrupt = hub.logFor(QStringLiteral("corrupt.safetensors"));
        QCOMPARE(corrupt.size(), 2);
        QVERIFY(corrupt[1].range.isEmpty());
        QVERIFY(events.join(QLatin1Char('\n')).contains(QLatin1String("mismatch")));
        QVERIFY(events.join(QLatin1Char('\n')).contains(QLatin1String("ignored the range")));
        QVERIFY(events.join(QLatin1Char('\n')).contains(QLatin1String("stalled")));
        QVERIFY2(m.retries() >= 7, qPrintable(QString::number(m.retries())));
        qint64 wire = 0;
        for (const FaultyHub::Served &x : hub.log())
            wire += x.path.isEmpty() ? 0 : x.bytesSent;
        std::printf("fault suite: the hub sent %lld body bytes for %lld bytes of files\n", static_cast<long long>(wire),
                    static_cast<long long>(snap.totalBytes));

        // The queue on disk says every file is done.
        const QJsonObject q = QJsonDocument::fromJson(readAll(m_tmp.filePath(QStringLiteral("faults/queue.json")))).object();
        QCOMPARE(q.value(QLatin1String("job")).toObject().value(QLatin1String("state")).toString(), QStringLiteral("done"));
        qInfo("fault suite: %d requests, %lld ms", int(hub.log().size()), static_cast<long long>(clock.elapsed()));
    }

    // A server restart drops every connection at once (so it gets its own job: the other
    // fault counts above stay exact).
    void serverRestartMidDownload()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        const QByteArray a = FaultyHub::randomContent(3000000, 201);
        const QByteArray b = FaultyHub::randomContent(2000000, 202);
        hub.addFile(kRepo, QStringLiteral("restart.safetensors"), a);
        hub.addFile(kRepo, QStringLiteral("bystander.safetensors"), b);
        hub.addFault(QStringLiteral("restart.safetensors"), {FaultyHub::Fault::RestartAfter, 800000, 0, -1, 800});
        DownloadManager m(config(QStringLiteral("restart-server")), nullptr);
        const JobSpec s = spec(hub, QStringLiteral("restart-server"));
        const Run r = runJob(m, s, 30000);
        QVERIFY2(r.ok, qPrintable(r.summary));
        QCOMPARE(readAll(s.dest + QStringLiteral("/restart.safetensors")), a);
        QCOMPARE(readAll(s.dest + QStringLiteral("/bystander.safetensors")), b);
        const auto log = hub.logFor(QStringLiteral("restart.safetensors"));
        QVERIFY(log.size() >= 2);
        QVERIFY(log.last().rangeStart > 0 && log.last().rangeStart <= 800000);
        // Requests made while the server was down were refused; the file resumed, none re-fetched.
        for (const QString &p : {QStringLiteral("restart.safetensors"), QStringLiteral("bystander.safetensors")}) {
            const FileSnapshot *f = fileIn(m.snapshot(), p);
            QCOMPARE(f->transferred, f->size);
            account(f->transferred, f->size);
        }
        QVERIFY(partFiles(s.dest).isEmpty());
    }

    void attemptCapFailsOneFileWhileOthersFinish()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("good.bin"), FaultyHub::randomContent(500000, 11));
        hub.addFile(kRepo, QStringLiteral("broken.bin"), FaultyHub::randomContent(1000, 12));
        hub.addFile(kRepo, QStringLiteral("gone.bin"), FaultyHub::randomContent(1000, 13));
        hub.setAlwaysStatus(QStringLiteral("broken.bin"), 500);
        hub.setAlwaysStatus(QStringLiteral("gone.bin"), 404);
        DownloadOptions o = fastOptions();
        o.maxAttempts = 3;
        DownloadManager m(config(QStringLiteral("cap"), o), nullptr);
        const JobSpec s = spec(hub, QStringLiteral("cap"));
        const Run r = runJob(m, s, 20000);
        QVERIFY(r.ended);
        QVERIFY(!r.ok);
        QVERIFY2(r.summary.contains(QLatin1String("2 of 3 files failed")), qPrintable(r.summary));
        QCOMPARE(m.state(), JobState::Failed);
        QCOMPARE(m.failedFiles(), 2);
        const DownloadSnapshot snap = m.snapshot();
        QCOMPARE(fileIn(snap, QStringLiteral("good.bin"))->state, FileState::Done);
        const FileSnapshot *broken = fileIn(snap, QStringLiteral("broken.bin"));
        QCOMPARE(broken->state, FileState::Failed);
        QVERIFY2(broken->reason.contains(QLatin1String("500")) && broken->reason.contains(QLatin1String("gave up after 3")), qPrintable(broken->reason));
        const FileSnapshot *gone = fileIn(snap, QStringLiteral("gone.bin"));
        QCOMPARE(gone->state, FileState::Failed);
        QVERIFY2(gone->reason.contains(QLatin1String("not on the hub")), qPrintable(gone->reason));
        QCOMPARE(hub.logFor(QStringLiteral("broken.bin")).size(), 3);
        QCOMPARE(hub.logFor(QStringLiteral("gone.bin")).size(), 1); // a 404 is not retried
        QCOMPARE(readAll(s.dest + QStringLiteral("/good.bin")), hub.content(kRepo, QStringLiteral("good.bin")));
        account(fileIn(snap, QStringLiteral("good.bin"))->transferred, 500000);

        // "Retry failed" after the hub recovers: only the failed files are fetched.
        hub.setAlwaysStatus(QStringLiteral("broken.bin"), 0);
        hub.setAlwaysStatus(QStringLiteral("gone.bin"), 0);
        QSignalSpy again(&m, &DownloadManager::finished);
        m.retryFailed();
        QVERIFY(again.wait(10000));
        QVERIFY2(again.first().at(0).toBool(), qPrintable(again.first().at(1).toString()));
        QCOMPARE(hub.logFor(QStringLiteral("good.bin")).size(), 1);
        QCOMPARE(readAll(s.dest + QStringLiteral("/broken.bin")), hub.content(kRepo, QStringLiteral("broken.bin")));
    }

    void checksumMismatchTwiceFailsLoudly()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("bad.bin"), FaultyHub::randomContent(400000, 21));
        hub.addFile(kRepo, QStringLiteral("ok.bin"), FaultyHub::randomContent(1000, 22));
        hub.setListedSha256(QStringLiteral("bad.bin"), QString(64, QLatin1Char('0')));
        DownloadManager m(config(QStringLiteral("mismatch")), nullptr);
        const JobSpec s = spec(hub, QStringLiteral("mismatch"));
        const Run r = runJob(m, s, 20000);
        QVERIFY(r.ended);
        QVERIFY(!r.ok);
        const FileSnapshot *bad = fileIn(m.snapshot(), QStringLiteral("bad.bin"));
        QCOMPARE(bad->state, FileState::Failed);
        QVERIFY2(bad->reason.contains(QLatin1String("sha256 mismatch")) && bad->reason.contains(QLatin1String("again")), qPrintable(bad->reason));
        QCOMPARE(hub.logFor(QStringLiteral("bad.bin")).size(), 2); // the first try and one fresh retry, no more
        QCOMPARE(bad->transferred, 800000);
        QVERIFY(!QFile::exists(s.dest + QStringLiteral("/bad.bin")));
        QVERIFY(partFiles(s.dest).isEmpty());
        QCOMPARE(fileIn(m.snapshot(), QStringLiteral("ok.bin"))->state, FileState::Done);
    }

    void pauseKeepsThePartAndResumeContinues()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.setBytesPerSecond(2000000);
        const QByteArray content = FaultyHub::randomContent(3000000, 31);
        hub.addFile(kRepo, QStringLiteral("big.bin"), content);
        DownloadManager m(config(QStringLiteral("pause")), nullptr);
        const JobSpec s = spec(hub, QStringLiteral("pause"));
        QSignalSpy finished(&m, &DownloadManager::finished);
        m.startJob(s);
        QTRY_VERIFY_WITH_TIMEOUT(m.doneBytes() > 600000, 10000);
        m.pause();
        QTRY_COMPARE_WITH_TIMEOUT(m.state(), JobState::Paused, 10000);
        QCOMPARE(fileIn(m.snapshot(), QStringLiteral("big.bin"))->state, FileState::Paused);
        const QString part = FileTransfer::partPathFor(s.dest, QStringLiteral("big.bin"));
        QVERIFY(QFile::exists(part));
        const qint64 partSize = QFileInfo(part).size();
        QVERIFY(partSize > 0 && partSize < content.size());
        const int requests = static_cast<int>(hub.logFor(QStringLiteral("big.bin")).size());
        QTest::qWait(400);
        QCOMPARE(hub.logFor(QStringLiteral("big.bin")).size(), requests); // paused means no traffic
        QCOMPARE(QFileInfo(part).size(), partSize);
        QCOMPARE(finished.size(), 0);

        m.resume();
        QVERIFY(finished.wait(15000));
        QVERIFY(finished.first().at(0).toBool());
        QCOMPARE(readAll(s.dest + QStringLiteral("/big.bin")), content);
        const auto log = hub.logFor(QStringLiteral("big.bin"));
        QCOMPARE(log.last().rangeStart, partSize);
        QCOMPARE(log.last().status, 206);
        const qint64 transferred = fileIn(m.snapshot(), QStringLiteral("big.bin"))->transferred;
        QCOMPARE(transferred, content.size()); // nothing fetched twice across the pause
        account(transferred, content.size());
    }

    void restartedAppResumesFromTheQueue()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.setBytesPerSecond(2000000);
        const QByteArray a = FaultyHub::randomContent(2500000, 41);
        const QByteArray b = FaultyHub::randomContent(2500000, 42);
        hub.addFile(kRepo, QStringLiteral("a.bin"), a);
        hub.addFile(kRepo, QStringLiteral("b.bin"), b);
        DownloadManager::Config c = config(QStringLiteral("restart"));
        const JobSpec s = spec(hub, QStringLiteral("restart"));
        {
            DownloadManager first(c, nullptr);
            first.startJob(s);
            QTRY_VERIFY_WITH_TIMEOUT(first.doneBytes() > 800000, 10000);
        } // the app quits mid-download (the queue says "running")
        const QJsonObject q = QJsonDocument::fromJson(readAll(c.queuePath)).object();
        QCOMPARE(q.value(QLatin1String("job")).toObject().value(QLatin1String("state")).toString(), QStringLiteral("running"));
        const qint64 partA = QFileInfo(FileTransfer::partPathFor(s.dest, QStringLiteral("a.bin"))).size();
        const qint64 partB = QFileInfo(FileTransfer::partPathFor(s.dest, QStringLiteral("b.bin"))).size();
        QVERIFY(partA + partB > 0);

        c.autoResume = true;
        DownloadManager second(c, nullptr);
        QSignalSpy finished(&second, &DownloadManager::finished);
        QVERIFY(finished.wait(15000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QTest::qWait(50);
        QCOMPARE(readAll(s.dest + QStringLiteral("/a.bin")), a);
        QCOMPARE(readAll(s.dest + QStringLiteral("/b.bin")), b);
        const qint64 t = second.transferredBytes();
        QCOMPARE(t, a.size() + b.size() - partA - partB); // only the missing bytes, none twice
        account(t + partA + partB, a.size() + b.size());
        QVERIFY(partFiles(s.dest).isEmpty());
    }

    void tokenIsSentOnlyToTheEndpoint()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        QVERIFY(hub.enableCdn());
        hub.addFile(kRepo, QStringLiteral("config.json"), FaultyHub::randomContent(100, 51), false);
        hub.addFile(kRepo, QStringLiteral("model.safetensors"), FaultyHub::randomContent(200000, 52), true);
        DownloadManager::Config c = config(QStringLiteral("token"));
        c.token = QStringLiteral("hf_secret");
        DownloadManager m(c, nullptr);
        const JobSpec s = spec(hub, QStringLiteral("token"));
        const Run r = runJob(m, s, 10000);
        QVERIFY2(r.ok, qPrintable(r.summary));
        int cdn = 0;
        for (const FaultyHub::Served &x : hub.log()) {
            if (x.server == QLatin1String("cdn")) {
                ++cdn;
                QVERIFY2(!x.authorized, "the token leaked to the CDN");
            } else {
                QVERIFY2(x.authorized, qPrintable(x.path));
            }
        }
        QCOMPARE(cdn, 1);
        QCOMPARE(readAll(s.dest + QStringLiteral("/model.safetensors")), hub.content(kRepo, QStringLiteral("model.safetensors")));
    }

    void notEnoughSpaceRefusesBeforeDownloading()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("huge.safetensors"), FaultyHub::randomContent(10, 61));
        hub.setListedSize(QStringLiteral("huge.safetensors"), qint64(4) << 50); // 4 PB
        DownloadManager m(config(QStringLiteral("space")), nullptr);
        JobSpec s = spec(hub, QStringLiteral("space"));
        s.countContainer = true;
        const Run r = runJob(m, s, 10000);
        QVERIFY(r.ended);
        QVERIFY(!r.ok);
        QVERIFY2(r.summary.contains(QLatin1String("not enough free space")) && r.summary.contains(QLatin1String("for the container")),
                 qPrintable(r.summary));
        QVERIFY(!m.spaceOk());
        QCOMPARE(m.downloadBytesNeeded(), qint64(4) << 50);
        QCOMPARE(m.containerBytesNeeded(), qint64(4) << 50);
        QVERIFY(m.freeBytes() > 0);
        QVERIFY(hub.logFor(QStringLiteral("huge.safetensors")).isEmpty());
    }

    void includeGlobsAndPaginatedListing()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.setListingPageSize(2);
        for (int i = 0; i < 5; ++i)
            hub.addFile(kRepo, QStringLiteral("shard-%1.safetensors").arg(i), FaultyHub::randomContent(1000 + i, 70 + i));
        hub.addFile(kRepo, QStringLiteral("config.json"), FaultyHub::randomContent(50, 80), false);
        hub.addFile(kRepo, QStringLiteral("nested/generation_config.json"), FaultyHub::randomContent(60, 81), false);
        DownloadManager m(config(QStringLiteral("include")), nullptr);
        JobSpec s = spec(hub, QStringLiteral("include"));
        s.include = {QStringLiteral("*.json"), QStringLiteral("shard-4.*")};
        const Run r = runJob(m, s, 10000);
        QVERIFY2(r.ok, qPrintable(r.summary));
        QCOMPARE(m.fileCount(), 3);
        QVERIFY(QFile::exists(s.dest + QStringLiteral("/nested/generation_config.json")));
        QVERIFY(QFile::exists(s.dest + QStringLiteral("/shard-4.safetensors")));
        QVERIFY(!QFile::exists(s.dest + QStringLiteral("/shard-0.safetensors")));
        int listings = 0;
        for (const FaultyHub::Served &x : hub.log())
            listings += x.path.isEmpty() ? 1 : 0;
        QCOMPARE(listings, 4); // 8 entries (7 files + 1 folder) in pages of 2
    }

    void filesAlreadyHereAreVerifiedNotFetched()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("x.bin"), FaultyHub::randomContent(300000, 91));
        hub.addFile(kRepo, QStringLiteral("y.bin"), FaultyHub::randomContent(300000, 92));
        const JobSpec s = spec(hub, QStringLiteral("again"));
        {
            DownloadManager m(config(QStringLiteral("again")), nullptr);
            QVERIFY(runJob(m, s, 10000).ok);
        }
        QFile::remove(m_tmp.filePath(QStringLiteral("again/queue.json"))); // forget the queue: the files must speak for themselves
        {
            QFile y(s.dest + QStringLiteral("/y.bin"));
            QVERIFY(y.open(QIODevice::ReadWrite));
            y.seek(1000);
            y.write("X");
        }
        hub.clearLog();
        DownloadManager m(config(QStringLiteral("again")), nullptr);
        const Run r = runJob(m, s, 10000);
        QVERIFY2(r.ok, qPrintable(r.summary));
        QVERIFY(hub.logFor(QStringLiteral("x.bin")).isEmpty()); // hashed, matched, not fetched
        QCOMPARE(hub.logFor(QStringLiteral("y.bin")).size(), 1); // damaged: fetched again
        QCOMPARE(readAll(s.dest + QStringLiteral("/y.bin")), hub.content(kRepo, QStringLiteral("y.bin")));
    }

    // Killed after the last byte but before the rename: the complete .part is checked and moved
    // into place without a request; a .part that is already too long is discarded.
    void completePartIsVerifiedWithoutARequest()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        const QByteArray whole = FaultyHub::randomContent(250000, 121);
        const QByteArray other = FaultyHub::randomContent(1000, 122);
        hub.addFile(kRepo, QStringLiteral("whole.bin"), whole);
        hub.addFile(kRepo, QStringLiteral("other.bin"), other);
        const JobSpec s = spec(hub, QStringLiteral("wholepart"));
        QDir().mkpath(s.dest);
        {
            QFile part(FileTransfer::partPathFor(s.dest, QStringLiteral("whole.bin")));
            QVERIFY(part.open(QIODevice::WriteOnly));
            part.write(whole);
            QFile longer(FileTransfer::partPathFor(s.dest, QStringLiteral("other.bin")));
            QVERIFY(longer.open(QIODevice::WriteOnly));
            longer.write(other + "trailing garbage");
        }
        DownloadManager m(config(QStringLiteral("wholepart")), nullptr);
        const Run r = runJob(m, s, 10000);
        QVERIFY2(r.ok, qPrintable(r.summary));
        QVERIFY(hub.logFor(QStringLiteral("whole.bin")).isEmpty());
        QCOMPARE(readAll(s.dest + QStringLiteral("/whole.bin")), whole);
        QCOMPARE(hub.logFor(QStringLiteral("other.bin")).size(), 1);
        QCOMPARE(hub.logFor(QStringLiteral("other.bin")).first().rangeStart, 0);
        QCOMPARE(readAll(s.dest + QStringLiteral("/other.bin")), other);
        QVERIFY(partFiles(s.dest).isEmpty());
    }

    void bandwidthLimitHolds()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("a.bin"), FaultyHub::randomContent(750000, 101));
        hub.addFile(kRepo, QStringLiteral("b.bin"), FaultyHub::randomContent(750000, 102));
        DownloadOptions o = fastOptions();
        o.bandwidthLimit = 1000000;
        DownloadManager m(config(QStringLiteral("limit"), o), nullptr);
        QElapsedTimer clock;
        clock.start();
        const Run r = runJob(m, spec(hub, QStringLiteral("limit")), 15000);
        QVERIFY2(r.ok, qPrintable(r.summary));
        // 1.5 MB at 1 MB/s, less the initial quarter-second burst.
        QVERIFY2(clock.elapsed() >= 1100, qPrintable(QString::number(clock.elapsed())));
    }

    void aListingRetryCountsDownAndAFailedStartCanBeTriedAgain()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("d.bin"), FaultyHub::randomContent(20000, 5));
        // The hub asks to be asked again in 3 s: the page's line counts the seconds down.
        FaultyHub::FaultSpec busy;
        busy.kind = FaultyHub::Fault::Status;
        busy.status = 503;
        busy.retryAfterS = 3;
        hub.addFault(QString(), busy);
        DownloadManager m(config(QStringLiteral("countdown")), nullptr);
        const JobSpec s = spec(hub, QStringLiteral("countdown"));
        m.startJob(s);
        QTRY_VERIFY_WITH_TIMEOUT(m.reason().contains(QLatin1String("Trying again in 3 s")), 3000);
        QTRY_VERIFY_WITH_TIMEOUT(m.reason().contains(QLatin1String("Trying again in 2 s")), 2500);
        QTRY_VERIFY_WITH_TIMEOUT(m.reason().contains(QLatin1String("Trying again in 1 s")), 2500);
        QTRY_COMPARE_WITH_TIMEOUT(m.state(), Download::JobState::Done, 10000);
        m.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!m.hasJob(), 3000);

        // A listing that fails every attempt ends the job before it has files ("could not
        // start"); once the hub answers, retrying reads the list again and downloads.
        hub.setAlwaysStatus(QString(), 500);
        DownloadOptions few = fastOptions();
        few.maxAttempts = 2;
        DownloadManager failing(config(QStringLiteral("try-again"), few), nullptr);
        const JobSpec t = spec(hub, QStringLiteral("try-again"));
        failing.startJob(t);
        QTRY_COMPARE_WITH_TIMEOUT(failing.state(), Download::JobState::Failed, 10000);
        QCOMPARE(failing.fileCount(), 0);
        hub.setAlwaysStatus(QString(), 0);
        failing.retryFailed();
        QTRY_COMPARE_WITH_TIMEOUT(failing.state(), Download::JobState::Done, 10000);
        QCOMPARE(failing.fileCount(), 1);
    }

    void cancelDeletesPartialFiles()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.setBytesPerSecond(1000000);
        hub.addFile(kRepo, QStringLiteral("c.bin"), FaultyHub::randomContent(3000000, 111));
        DownloadManager m(config(QStringLiteral("cancel")), nullptr);
        const JobSpec s = spec(hub, QStringLiteral("cancel"));
        m.startJob(s);
        QTRY_VERIFY_WITH_TIMEOUT(m.doneBytes() > 200000, 10000);
        m.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!m.hasJob(), 3000);
        QVERIFY(partFiles(s.dest).isEmpty());
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("cancel/queue.json"))));
    }
};

QTEST_GUILESS_MAIN(TestDownload)
#include "tst_download.moc"
