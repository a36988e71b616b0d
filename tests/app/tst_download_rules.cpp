// The downloader's pure rules: what each hub answer means for a partial file, Retry-After and
// backoff, the listing parser (checksums, unsafe paths, pagination), include globs, the
// endpoint and token scoping, checksums, and the persistent queue's round trip.
#include "download/downloadqueue.h"
#include "download/filechecksum.h"
#include "download/hubendpoint.h"
#include "download/hublisting.h"
#include "download/resumerules.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTimeZone>
#include <QTest>

using resumerules::Verdict;

class TestDownloadRules : public QObject {
    Q_OBJECT

    static resumerules::ResponseFacts facts(int status, qint64 offset, qint64 size, QByteArray contentRange = {},
                                            QByteArray etag = {}, QByteArray knownEtag = {})
    {
        resumerules::ResponseFacts f;
        f.status = status;
        f.offset = offset;
        f.expectedSize = size;
        f.contentRange = contentRange;
        f.etag = etag;
        f.knownEtag = knownEtag;
        return f;
    }

private Q_SLOTS:
    void rangeAcceptedOnlyWhenItMatches()
    {
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 100-999/1000")).verdict, Verdict::Append);
        // Wrong start, wrong end, wrong total, missing header: never appended.
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 0-999/1000")).verdict, Verdict::RestartFresh);
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 100-500/1000")).verdict, Verdict::RestartFresh);
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 100-999/2000")).verdict, Verdict::RestartFresh);
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 100-999/*")).verdict, Verdict::RestartFresh);
        QCOMPARE(resumerules::classify(facts(206, 100, 1000)).verdict, Verdict::RestartFresh);
        // Same range, but the file changed under us (ETag differs).
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 100-999/1000", "\"b\"", "\"a\"")).verdict, Verdict::RestartFresh);
        QCOMPARE(resumerules::classify(facts(206, 100, 1000, "bytes 100-999/1000", "\"a\"", "\"a\"")).verdict, Verdict::Append);
        auto f = facts(206, 100, 1000, "bytes 100-999/1000");
        f.contentLength = "800";
        QCOMPARE(resumerules::classify(f).verdict, Verdict::RestartFresh);
        f.contentLength = "900";
        QCOMPARE(resumerules::classify(f).verdict, Verdict::Append);
    }

    void fullBodyToARangedRequestRestartsFromZero()
    {
        auto f = facts(200, 100, 1000);
        f.contentLength = "1000";
        const auto d = resumerules::classify(f);
        QCOMPARE(d.verdict, Verdict::FromZero);
        QVERIFY(d.reason.contains(QLatin1String("from zero")));
        f.contentLength = "999"; // Content-Length must agree with the listing
        QCOMPARE(resumerules::classify(f).verdict, Verdict::RetryLater);
    }

    void unsatisfiableRangeOnACompletePartVerifies()
    {
        QCOMPARE(resumerules::classify(facts(416, 1000, 1000, "bytes */1000")).verdict, Verdict::Verify);
        QCOMPARE(resumerules::classify(facts(416, 500, 1000, "bytes */1000")).verdict, Verdict::RestartFresh);
    }

    void statusesThatRetryAndThatFail()
    {
        QCOMPARE(resumerules::classify(facts(429, 0, 10)).verdict, Verdict::RetryLater);
        QCOMPARE(resumerules::classify(facts(503, 0, 10)).verdict, Verdict::RetryLater);
        QCOMPARE(resumerules::classify(facts(500, 0, 10)).verdict, Verdict::RetryLater);
        QCOMPARE(resumerules::classify(facts(401, 0, 10)).verdict, Verdict::Fail);
        QVERIFY(resumerules::classify(facts(401, 0, 10)).reason.contains(QLatin1String("token")));
        QCOMPARE(resumerules::classify(facts(404, 0, 10)).verdict, Verdict::Fail);
        auto r = facts(302, 0, 10);
        r.hasLocation = true;
        QCOMPARE(resumerules::classify(r).verdict, Verdict::Redirect);
    }

    void contentRangeParsing()
    {
        auto cr = resumerules::parseContentRange("bytes 5-9/10");
        QVERIFY(cr);
        QCOMPARE(cr->first, 5);
        QCOMPARE(cr->last, 9);
        QCOMPARE(cr->total, 10);
        cr = resumerules::parseContentRange("bytes */77");
        QVERIFY(cr);
        QCOMPARE(cr->first, -1);
        QCOMPARE(cr->total, 77);
        QVERIFY(!resumerules::parseContentRange("bytes 9-5/10"));
        QVERIFY(!resumerules::parseContentRange("bytes 5-10/10"));
        QVERIFY(!resumerules::parseContentRange("items 1-2/3"));
        QVERIFY(!resumerules::parseContentRange(""));
    }

    void retryAfterSecondsAndDate()
    {
        const QDateTime now = QDateTime(QDate(2026, 11, 29), QTime(18, 0, 0), QTimeZone::utc());
        QCOMPARE(*resumerules::parseRetryAfter("3", now), 3000);
        QCOMPARE(*resumerules::parseRetryAfter("Sun, 29 Nov 2026 18:00:07 GMT", now), 7000);
        QCOMPARE(*resumerules::parseRetryAfter("Sun, 29 Nov 2026 17:00:00 GMT", now), 0);
        QVERIFY(!resumerules::parseRetryAfter("", now));
        QVERIFY(!resumerules::parseRetryAfter("soon", now));
    }

    void backoffIsFullJitterUnderADoublingCeiling()
    {
        std::mt19937_64 rng(7);
        for (int attempt = 1; attempt <= 12; ++attempt) {
            const qint64 ceiling = qMin<qint64>(60000, qint64(1000) << (attempt - 1));
            qint64 lo = LLONG_MAX, hi = 0;
            for (int i = 0; i < 400; ++i) {
                const qint64 d = resumerules::backoffMs(attempt, 1000, 60000, rng);
                QVERIFY(d >= 0 && d <= ceiling);
                lo = qMin(lo, d);
                hi = qMax(hi, d);
            }
            // Full jitter: the draws spread over the whole interval, not just its top.
            QVERIFY2(lo < ceiling / 10 && hi > ceiling * 9 / 10, qPrintable(QStringLiteral("attempt %1: %2..%3").arg(attempt).arg(lo).arg(hi)));
        }
    }

    void etagStrength()
    {
        QVERIFY(resumerules::isStrongEtag("\"abc\""));
        QVERIFY(!resumerules::isStrongEtag("W/\"abc\""));
        QVERIFY(!resumerules::isStrongEtag(""));
    }

    void listingParsesChecksumsAndSkipsDirectories()
    {
        const QByteArray json = R"([
          {"type":"directory","oid":"0000000000000000000000000000000000000000","size":0,"path":"sub"},
          {"type":"file","oid":"ce013625030ba8dba906f756967f9e9ca394464a","size":6,"path":"config.json"},
          {"type":"file","oid":"1111111111111111111111111111111111111111","size":1000,"path":"sub/model-00001.safetensors",
           "lfs":{"oid":"ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789","size":1000,"pointerSize":134}}
        ])";
        const QList<HubFile> files = hublisting::parse(json);
        QCOMPARE(files.size(), 2);
        QCOMPARE(files[0].path, QStringLiteral("config.json"));
        QCOMPARE(files[0].size, 6);
        QVERIFY(files[0].sha256.isEmpty());
        QCOMPARE(files[0].gitOid, QStringLiteral("ce013625030ba8dba906f756967f9e9ca394464a"));
        QCOMPARE(files[1].sha256, QStringLiteral("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"));
        QCOMPARE(files[1].size, 1000);
    }

    void listingRefusesUnsafePaths_data()
    {
        QTest::addColumn<QString>("path");
        for (const char *p : {"../etc/passwd", "/abs", "a/../b", "a//b", "./a", "a\\\\b", "C:x", "a/b.part", ""})
            QTest::newRow(p) << QString::fromLatin1(p);
    }

    void listingRefusesUnsafePaths()
    {
        QFETCH(QString, path);
        QVERIFY(!hublisting::isSafeRelativePath(path));
        const QByteArray json = QJsonDocument(QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("file")},
                                                                     {QStringLiteral("size"), 1},
                                                                     {QStringLiteral("path"), path}}})
                                    .toJson();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, hublisting::parse(json));
    }

    void listingNeedsSizes()
    {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, hublisting::parse(R"([{"type":"file","path":"a"}])"));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, hublisting::parse(R"({"not":"an array"})"));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 hublisting::parse(R"([{"type":"file","path":"a","size":1,"lfs":{"oid":"xyz","size":1}}])"));
    }

    void paginationLink()
    {
        const QUrl base(QStringLiteral("https://hub.example/api/models/a/b/tree/main?recursive=1"));
        QCOMPARE(hublisting::nextPage(R"(<https://hub.example/api/models/a/b/tree/main?recursive=1&cursor=xyz>; rel="next")", base),
                 QUrl(QStringLiteral("https://hub.example/api/models/a/b/tree/main?recursive=1&cursor=xyz")));
        QCOMPARE(hublisting::nextPage(R"(<https://x/prev>; rel="prev", </p2>; rel="next")", base), QUrl(QStringLiteral("https://hub.example/p2")));
        QVERIFY(hublisting::nextPage(R"(<https://x/prev>; rel="prev")", base).isEmpty());
        QVERIFY(hublisting::nextPage("", base).isEmpty());
    }

    void includeGlobs()
    {
        QVERIFY(hublisting::globMatch(QStringLiteral("*.json"), QStringLiteral("config.json")));
        QVERIFY(hublisting::globMatch(QStringLiteral("*.json"), QStringLiteral("sub/config.json"))); // '*' crosses '/'
        QVERIFY(!hublisting::globMatch(QStringLiteral("*.json"), QStringLiteral("model.safetensors")));
        QVERIFY(hublisting::globMatch(QStringLiteral("model-0000[1-2]-*.safetensors"), QStringLiteral("model-00002-of-00009.safetensors")));
        QVERIFY(!hublisting::globMatch(QStringLiteral("model-0000[!1-2]-*"), QStringLiteral("model-00002-of-00009.safetensors")));
        QVERIFY(hublisting::globMatch(QStringLiteral("token?zer.json"), QStringLiteral("tokenizer.json")));
        QVERIFY(!hublisting::globMatch(QStringLiteral("config.json"), QStringLiteral("sub/config.json")));
        QList<HubFile> files{{QStringLiteral("a.json"), 1, {}, {}}, {QStringLiteral("b.bin"), 1, {}, {}}, {QStringLiteral("c.txt"), 1, {}, {}}};
        QCOMPARE(hublisting::filter(files, {}).size(), 3);
        QCOMPARE(hublisting::filter(files, {QStringLiteral("*.json"), QStringLiteral("*.txt")}).size(), 2);
    }

    void endpointResolutionAndUrls()
    {
        qputenv("HF_ENDPOINT", "https://mirror.example/hub");
        QCOMPARE(HubEndpoint::resolve(QStringLiteral("http://127.0.0.1:9")), QStringLiteral("http://127.0.0.1:9"));
        QCOMPARE(HubEndpoint::resolve({}), QStringLiteral("https://mirror.example/hub"));
        qunsetenv("HF_ENDPOINT");
        QCOMPARE(HubEndpoint::resolve({}), QStringLiteral("https://huggingface.co"));

        const HubEndpoint ep(QStringLiteral("https://mirror.example/hub/"));
        QCOMPARE(ep.treeUrl(QStringLiteral("moonshotai/Kimi-K3"), QStringLiteral("refs/pr/1")).toString(QUrl::FullyEncoded),
                 QStringLiteral("https://mirror.example/hub/api/models/moonshotai/Kimi-K3/tree/refs%2Fpr%2F1?recursive=1"));
        QCOMPARE(ep.fileUrl(QStringLiteral("a/b"), QStringLiteral("main"), QStringLiteral("dir/x y.json")).toString(QUrl::FullyEncoded),
                 QStringLiteral("https://mirror.example/hub/a/b/resolve/main/dir/x%20y.json"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, HubEndpoint(QStringLiteral("ftp://x")));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, HubEndpoint(QStringLiteral("not a url")));
    }

    void tokenGoesOnlyToTheEndpoint()
    {
        const HubEndpoint ep(QStringLiteral("https://huggingface.co"), QStringLiteral("hf_secret"));
        QVERIFY(ep.mayCarryToken(QUrl(QStringLiteral("https://huggingface.co/a/b/resolve/main/x"))));
        QVERIFY(ep.mayCarryToken(QUrl(QStringLiteral("https://huggingface.co:443/api/models/a/b"))));
        QVERIFY(!ep.mayCarryToken(QUrl(QStringLiteral("https://cdn-lfs.huggingface.co/x"))));
        QVERIFY(!ep.mayCarryToken(QUrl(QStringLiteral("http://huggingface.co/a"))));
        QVERIFY(!ep.mayCarryToken(QUrl(QStringLiteral("https://huggingface.co:8443/a"))));
        QVERIFY(!ep.mayCarryToken(QUrl(QStringLiteral("https://evil.example/huggingface.co"))));
        // Plain http only to a loopback hub (tests), never across the network.
        const HubEndpoint local(QStringLiteral("http://127.0.0.1:8080"), QStringLiteral("t"));
        QVERIFY(local.mayCarryToken(QUrl(QStringLiteral("http://127.0.0.1:8080/x"))));
        QVERIFY(!local.mayCarryToken(QUrl(QStringLiteral("http://127.0.0.1:8081/x"))));
        const HubEndpoint lan(QStringLiteral("http://hub.lan"), QStringLiteral("t"));
        QVERIFY(!lan.mayCarryToken(QUrl(QStringLiteral("http://hub.lan/x"))));
        const HubEndpoint none(QStringLiteral("https://huggingface.co"));
        QVERIFY(!none.mayCarryToken(QUrl(QStringLiteral("https://huggingface.co/x"))));
    }

    void repositoryNames()
    {
        QCOMPARE(HubEndpoint::normalizeRepo(QStringLiteral(" moonshotai/Kimi-Linear-48B-A3B-Instruct ")),
                 QStringLiteral("moonshotai/Kimi-Linear-48B-A3B-Instruct"));
        QCOMPARE(HubEndpoint::normalizeRepo(QStringLiteral("https://huggingface.co/moonshotai/Kimi-K3/tree/main")), QStringLiteral("moonshotai/Kimi-K3"));
        QCOMPARE(HubEndpoint::normalizeRepo(QStringLiteral("https://huggingface.co/models/a/b")), QStringLiteral("a/b"));
        QVERIFY(HubEndpoint::normalizeRepo(QStringLiteral("justone")).isEmpty());
        QVERIFY(HubEndpoint::normalizeRepo(QStringLiteral("a/b/c")).isEmpty());
        QVERIFY(HubEndpoint::normalizeRepo(QStringLiteral("../x")).isEmpty());
        QCOMPARE(HubEndpoint::folderName(QStringLiteral("a/b")), QStringLiteral("a--b"));
    }

    void checksums()
    {
        FileChecksum git(FileChecksum::GitSha1, QStringLiteral("ce013625030ba8dba906f756967f9e9ca394464a"), 6);
        git.addData("hello\n", 6);
        const QString g = git.result();
        QCOMPARE(g, QStringLiteral("ce013625030ba8dba906f756967f9e9ca394464a")); // `git hash-object` of "hello\n"
        QVERIFY(git.matches(g));
        FileChecksum sha(FileChecksum::Sha256, QStringLiteral("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"), 6);
        sha.addData("hel", 3);
        sha.addData("lo\n", 3);
        QCOMPARE(sha.result(), QStringLiteral("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"));

        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("x")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("hello\nworld");
        f.close();
        FileChecksum prefix(FileChecksum::Sha256, {}, 6);
        QString err;
        QVERIFY(prefix.addFilePrefix(f.fileName(), 6, nullptr, &err));
        QCOMPARE(prefix.result(), QStringLiteral("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"));
        FileChecksum tooLong(FileChecksum::Sha256, {}, 100);
        QVERIFY(!tooLong.addFilePrefix(f.fileName(), 100, nullptr, &err));
    }

    void queueRoundTrip()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("q/downloads.json"));
        DownloadJob job;
        job.repo = QStringLiteral("a/b");
        job.revision = QStringLiteral("main");
        job.endpoint = QStringLiteral("http://127.0.0.1:1");
        job.dest = dir.filePath(QStringLiteral("d"));
        job.include = {QStringLiteral("*.json")};
        job.state = JobState::Paused;
        QueuedFile f;
        f.path = QStringLiteral("x.bin");
        f.size = 42;
        f.sha256 = QString(64, QLatin1Char('a'));
        f.state = FileState::Failed;
        f.reason = QStringLiteral("HTTP 404");
        f.etag = "\"e\"";
        f.retries = 3;
        f.freshRetryUsed = true;
        job.files.push_back(f);
        QString err;
        QVERIFY2(downloadqueue::save(path, job, &err), qPrintable(err));
        const auto back = downloadqueue::load(path);
        QVERIFY(back);
        QCOMPARE(back->repo, job.repo);
        QCOMPARE(back->include, job.include);
        QCOMPARE(back->state, JobState::Paused);
        QCOMPARE(back->files.size(), size_t(1));
        QCOMPARE(back->files[0].state, FileState::Failed);
        QCOMPARE(back->files[0].reason, f.reason);
        QCOMPARE(back->files[0].etag, f.etag);
        QCOMPARE(back->files[0].retries, 3);
        QVERIFY(back->files[0].freshRetryUsed);
        QVERIFY(!downloadqueue::load(dir.filePath(QStringLiteral("none.json"))));
        QFile bad(dir.filePath(QStringLiteral("bad.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{garbage");
        bad.close();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, downloadqueue::load(bad.fileName()));
    }
};

QTEST_GUILESS_MAIN(TestDownloadRules)
#include "tst_download_rules.moc"
