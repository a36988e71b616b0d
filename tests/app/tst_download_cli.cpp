// `waste download` end to end against FaultyHub: the process is killed (SIGKILL) mid-download
// and started again with the same command; it must finish from where it was, every file with
// the right sha256, no .part left behind. Also: failures exit non-zero with a reason.
#include "faultyhub.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QString kRepo = QStringLiteral("cli/model");

QMap<QString, qint64> partSizes(const QString &dir)
{
    QMap<QString, qint64> out;
    QDirIterator it(dir, {QStringLiteral("*.part")}, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString p = it.next();
        out.insert(QDir(dir).relativeFilePath(p).chopped(5), QFileInfo(p).size());
    }
    return out;
}

QProcessEnvironment cliEnv()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("HF_ENDPOINT"));
    env.remove(QStringLiteral("HF_TOKEN"));
    env.insert(QStringLiteral("WASTE_DOWNLOAD_STALL_MS"), QStringLiteral("1500"));
    env.insert(QStringLiteral("WASTE_DOWNLOAD_BACKOFF_MS"), QStringLiteral("50"));
    env.insert(QStringLiteral("WASTE_DOWNLOAD_BACKOFF_MAX_MS"), QStringLiteral("400"));
    return env;
}

struct Result {
    bool finished = false;
    int exitCode = -1;
    QString err;
    QString out;
};

// Runs the CLI while this thread's event loop keeps serving the hub.
Result runCli(const QStringList &args, int timeoutMs)
{
    QProcess p;
    p.setProcessEnvironment(cliEnv());
    QSignalSpy done(&p, &QProcess::finished);
    p.start(QStringLiteral(WASTE_CLI_PATH), args);
    Result r;
    r.finished = done.wait(timeoutMs);
    if (!r.finished) {
        p.kill();
        done.wait(2000);
    }
    r.exitCode = p.exitCode();
    r.err = QString::fromUtf8(p.readAllStandardError());
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    return r;
}
} // namespace

class TestDownloadCli : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void killedMidDownloadAndRerunFinishes()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.setBytesPerSecond(1500000);
        hub.addFile(kRepo, QStringLiteral("config.json"), FaultyHub::randomContent(700, 1), false);
        for (int i = 1; i <= 3; ++i)
            hub.addFile(kRepo, QStringLiteral("model-0000%1-of-00003.safetensors").arg(i), FaultyHub::randomContent(2500000, 10 + i));
        hub.addFault(QStringLiteral("model-00002-of-00003.safetensors"), {FaultyHub::Fault::CutAfter, 300000});
        const QString dest = m_tmp.filePath(QStringLiteral("kill/dest"));
        const QStringList args{QStringLiteral("download"), kRepo, QStringLiteral("--dest"), dest,
                               QStringLiteral("--endpoint"), hub.endpoint(), QStringLiteral("--jobs"), QStringLiteral("2"),
                               QStringLiteral("--json")};

        QProcess first;
        first.setProcessEnvironment(cliEnv());
        QSignalSpy firstDone(&first, &QProcess::finished);
        first.start(QStringLiteral(WASTE_CLI_PATH), args);
        QVERIFY(first.waitForStarted(5000));
        QTRY_VERIFY_WITH_TIMEOUT([&] {
            qint64 n = 0;
            for (qint64 v : partSizes(dest))
                n += v;
            return n > 900000;
        }(), 20000);
        first.kill(); // SIGKILL: no chance to save anything
        QVERIFY(firstDone.wait(5000));
        QCOMPARE(first.exitStatus(), QProcess::CrashExit);
        const QMap<QString, qint64> parts = partSizes(dest);
        QVERIFY(!parts.isEmpty());

        hub.clearLog();
        hub.setBytesPerSecond(0);
        const Result r = runCli(args, 30000);
        QVERIFY2(r.finished, qPrintable(r.err));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("% ")) || r.err.contains(QLatin1String("%]")), qPrintable(r.err)); // progress lines
        const QJsonObject summary = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(summary.value(QLatin1String("ok")).toBool(), true);
        QCOMPARE(summary.value(QLatin1String("verified")).toInt(), 4);

        qint64 total = 0;
        qint64 alreadyHere = 0;
        for (const QString &path : hub.paths(kRepo)) {
            const QByteArray want = hub.content(kRepo, path);
            total += want.size();
            QFile f(dest + QLatin1Char('/') + path);
            QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
            QCOMPARE(QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256),
                     QCryptographicHash::hash(want, QCryptographicHash::Sha256));
            const auto log = hub.logFor(path);
            if (parts.contains(path) && parts.value(path) > 0) {
                // Continued where the killed run stopped, not from zero.
                QVERIFY(!log.isEmpty());
                QCOMPARE(log.first().rangeStart, parts.value(path));
                QCOMPARE(log.first().status, 206);
                alreadyHere += parts.value(path);
            }
            if (log.isEmpty())
                alreadyHere += want.size(); // finished before the kill
        }
        QVERIFY(partSizes(dest).isEmpty());
        qint64 sent = 0;
        for (const FaultyHub::Served &s : hub.log())
            sent += s.path.isEmpty() ? 0 : s.bytesSent;
        QCOMPARE(sent, total - alreadyHere); // the rerun fetched only what was missing
        std::printf("cli rerun: %lld bytes fetched, %lld were already on disk, %lld total\n", static_cast<long long>(sent),
                    static_cast<long long>(alreadyHere), static_cast<long long>(total));

        // A second rerun is a no-op that still exits 0 (files verified from the queue).
        hub.clearLog();
        const Result again = runCli(args, 20000);
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        for (const FaultyHub::Served &s : hub.log())
            QVERIFY2(s.path.isEmpty(), qPrintable(s.path));
    }

    void failureExitsNonZeroWithAReason()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(kRepo, QStringLiteral("a.bin"), FaultyHub::randomContent(100, 1));
        const Result missing = runCli({QStringLiteral("download"), QStringLiteral("nobody/nothing"), QStringLiteral("--dest"),
                                       m_tmp.filePath(QStringLiteral("missing")), QStringLiteral("--endpoint"), hub.endpoint()},
                                      20000);
        QVERIFY(missing.finished);
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains(QLatin1String("not found")), qPrintable(missing.err));

        hub.setAlwaysStatus(QStringLiteral("a.bin"), 403);
        const Result denied = runCli({QStringLiteral("download"), kRepo, QStringLiteral("--dest"), m_tmp.filePath(QStringLiteral("denied")),
                                      QStringLiteral("--endpoint"), hub.endpoint()},
                                     20000);
        QCOMPARE(denied.exitCode, 1);
        QVERIFY2(denied.err.contains(QLatin1String("403")), qPrintable(denied.err));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("denied/a.bin"))));

        const Result usage = runCli({QStringLiteral("download"), kRepo}, 10000);
        QCOMPARE(usage.exitCode, 2);
        QVERIFY(usage.err.contains(QLatin1String("--dest")));
        const Result badEndpoint = runCli({QStringLiteral("download"), kRepo, QStringLiteral("--dest"), m_tmp.filePath(QStringLiteral("x")),
                                           QStringLiteral("--endpoint"), QStringLiteral("ftp://nope")},
                                          10000);
        QCOMPARE(badEndpoint.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestDownloadCli)
#include "tst_download_cli.moc"
