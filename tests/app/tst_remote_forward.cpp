// The API server in front of a remote engine: while the open model is a remote engine
// (`waste serve` on the tiny r3 container, in a child process), local tools keep this
// server's address. Chat Completions (whole and streamed) and text completions are passed on
// and answered exactly as the remote server answers them directly; the local key still
// guards the door; requests are bounded like local ones (so many with the remote at once,
// a bounded queue, 503 server_busy past it, /health counting them); and when the remote
// server refuses its key or is gone the client gets a 502 that says so.
#include "apiservertestbed.h"
#include "remote/remotestore.h"
#include "wasteserveprocess.h"

#include <QNetworkReply>
#include <QScopeGuard>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

#include <csignal>

namespace {

const QString kR3 = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");

QJsonObject chat(const QString &text, int maxTokens)
{
    return {{"model", "whatever-the-tool-says"},
            {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", text}}}},
            {"max_tokens", maxTokens},
            {"temperature", 0.0}};
}

QString contentOf(const HttpResult &r)
{
    return r.json().value("choices").toArray().at(0).toObject().value("message").toObject().value("content").toString();
}

} // namespace

class TestRemoteForward : public QObject {
    Q_OBJECT

    std::unique_ptr<WasteServe> m_remote;
    std::unique_ptr<ApiServerTestbed> m_api;
    QString m_id;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        // Settings under the test-mode config folder too, never the user's ~/.config.
        const QString config = QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config);
        QCoreApplication::setApplicationName(QStringLiteral("WASTE Studio tst_remote_forward"));
        QSettings().clear();
        m_remote = std::make_unique<WasteServe>(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(m_remote->start(kR3, {"--model-id", "far-away", "--api-key", "sk-remote"}), qPrintable(m_remote->error()));

        RemoteEndpoint e;
        e.name = QStringLiteral("Far away");
        e.baseUrl = QUrl(m_remote->baseUrl());
        e.model = QStringLiteral("far-away");
        QCOMPARE(remotestore::add(e, QStringLiteral("sk-remote"), &m_id), QString());

        m_api = std::make_unique<ApiServerTestbed>();
        m_api->server.setApiKey(QStringLiteral("sk-local"));
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        m_api->engine.openModel(remoteendpoint::pathFor(m_id));
        QTRY_VERIFY_WITH_TIMEOUT(m_api->engine.state() != EngineController::Loading, 20000);
        QVERIFY2(m_api->engine.state() == EngineController::Ready, qPrintable(m_api->engine.errorString()));
    }

    void cleanupTestCase()
    {
        m_api.reset();
        m_remote.reset();
        remotestore::remove(m_id);
    }

    void localKeyStillGuards()
    {
        QCOMPARE(m_api->client->post("/v1/chat/completions", chat("hi", 4)).status, 401);
        QCOMPARE(m_api->client->post("/v1/chat/completions", chat("hi", 4), {{"Authorization", "Bearer sk-remote"}}).status,
                 401);
    }

    void modelsAndHealthNameTheRemoteEngine()
    {
        const QList<QPair<QByteArray, QByteArray>> auth{{"Authorization", "Bearer sk-local"}};
        const HttpResult health = m_api->client->get("/health");
        QCOMPARE(health.status, 200);
        QCOMPARE(health.json().value("model").toString(), QStringLiteral("Far away"));
        QCOMPARE(m_api->client->get("/v1/models", auth).json().value("data").toArray().at(0).toObject().value("id").toString(),
                 QStringLiteral("Far away"));
    }

    void chatCompletionsAreTheRemoteAnswer()
    {
        const QList<QPair<QByteArray, QByteArray>> local{{"Authorization", "Bearer sk-local"}};
        const QList<QPair<QByteArray, QByteArray>> remote{{"Authorization", "Bearer sk-remote"}};
        HttpTestClient direct(m_remote->port());
        const QJsonObject body = chat("Tell me a story.", 24);

        const HttpResult expected = direct.post("/v1/chat/completions", body, remote);
        QCOMPARE(expected.status, 200);
        QVERIFY(!contentOf(expected).isEmpty());
        const HttpResult forwarded = m_api->client->post("/v1/chat/completions", body, local);
        QCOMPARE(forwarded.status, 200);
        QCOMPARE(contentOf(forwarded), contentOf(expected));
        QCOMPARE(forwarded.json().value("model").toString(), QStringLiteral("far-away"));

        // Streamed: relayed as server-sent events, the same words, ending with [DONE].
        QJsonObject streamed = body;
        streamed.insert("stream", true);
        const HttpResult s = m_api->client->post("/v1/chat/completions", streamed, local);
        QCOMPARE(s.status, 200);
        QVERIFY(s.header("content-type").startsWith("text/event-stream"));
        bool framed = false;
        const QList<QByteArray> events = sseData(s.body, &framed);
        QVERIFY(framed);
        QVERIFY(events.size() >= 2);
        QCOMPARE(events.last(), QByteArray("[DONE]"));
        QString text;
        for (const QByteArray &e : events)
            text += QJsonDocument::fromJson(e).object().value("choices").toArray().at(0).toObject().value("delta").toObject()
                        .value("content").toString();
        QCOMPARE(text, contentOf(expected));

        // Text completions too.
        const QJsonObject completion{{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0.0}};
        const HttpResult c1 = direct.post("/v1/completions", completion, remote);
        const HttpResult c2 = m_api->client->post("/v1/completions", completion, local);
        QCOMPARE(c2.status, 200);
        QCOMPARE(c2.json().value("choices").toArray().at(0).toObject().value("text").toString(),
                 c1.json().value("choices").toArray().at(0).toObject().value("text").toString());
        // Each forwarded request is in the log with its status.
        const RequestLogModel *log = m_api->server.log();
        QCOMPARE(log->data(log->index(log->rowCount() - 1), RequestLogModel::StatusRole).toInt(), 200);
    }

    void otherRoutesAreRefusedInWords()
    {
        // The Responses and Messages APIs are not passed on: a 501 that says what is.
        const HttpResult r = m_api->client->post("/v1/responses", QJsonObject{{"model", "x"}, {"input", "hi"}},
                                                 {{"Authorization", "Bearer sk-local"}});
        QCOMPARE(r.status, 501);
        QVERIFY2(r.errorMessage().contains("passes only Chat Completions"), qPrintable(r.errorMessage()));
    }

    void remoteRequestsQueueLikeLocalOnes()
    {
        const QList<QPair<QByteArray, QByteArray>> local{{"Authorization", "Bearer sk-local"}};
        const QJsonObject body = chat("Count to three.", 8);
        HttpTestClient direct(m_remote->port());
        const HttpResult expected = direct.post("/v1/chat/completions", body, {{"Authorization", "Bearer sk-remote"}});
        QCOMPARE(expected.status, 200);
        auto requests = [&] { return m_api->client->get("/health").json().value("requests").toObject(); };

        // One request with the remote engine at a time, one more may wait.
        m_api->server.setRemoteMaxConcurrent(1);
        m_api->server.setMaxQueued(1);
        // The remote server paused (SIGSTOP): it accepts connections but answers nothing, as
        // a server busy with a long answer would, so what is in flight stays in flight.
        QVERIFY(::kill(pid_t(m_remote->pid()), SIGSTOP) == 0);
        const pid_t paused = pid_t(m_remote->pid());
        auto resume = qScopeGuard([this, paused] { // whatever fails below, the next tests get it back
            ::kill(paused, SIGCONT);
            m_api->server.setRemoteMaxConcurrent(4);
            m_api->server.setMaxQueued(32);
        });
        const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
        QNetworkReply *first = m_api->client->start("POST", "/v1/chat/completions", json, local);
        QTRY_COMPARE_WITH_TIMEOUT(requests().value("running").toInt(), 1, 20000);
        QNetworkReply *second = m_api->client->start("POST", "/v1/chat/completions", json, local);
        QTRY_COMPARE_WITH_TIMEOUT(requests().value("queued").toInt(), 1, 20000);
        const QJsonObject held = requests();
        QCOMPARE(held.value("running").toInt(), 1);
        QCOMPARE(held.value("max_concurrent").toInt(), 1);
        QCOMPARE(held.value("max_queued").toInt(), 1);
        QCOMPARE(m_api->client->get("/health").json().value("active_requests").toInt(), 2);

        // A third finds the place and the queue taken: 503 at once, in words, with Retry-After.
        const HttpResult busy = m_api->client->post("/v1/chat/completions", body, local);
        QCOMPARE(busy.status, 503);
        QCOMPARE(busy.json().value("error").toObject().value("code").toString(), QStringLiteral("server_busy"));
        QVERIFY2(busy.errorMessage().contains("with the remote engine"), qPrintable(busy.errorMessage()));
        QCOMPARE(busy.header("retry-after"), QByteArray("1"));

        // The remote server goes on: the one in flight is answered, then the one that waited,
        // each with the remote server's own answer.
        QVERIFY(::kill(paused, SIGCONT) == 0);
        const HttpResult a = HttpTestClient::wait(first);
        const HttpResult b = HttpTestClient::wait(second);
        QCOMPARE(a.status, 200);
        QCOMPARE(b.status, 200);
        QCOMPARE(contentOf(a), contentOf(expected));
        QCOMPARE(contentOf(b), contentOf(expected));
        QTRY_COMPARE_WITH_TIMEOUT(requests().value("running").toInt(), 0, 20000);
        QCOMPARE(requests().value("queued").toInt(), 0);

        resume.dismiss();
        m_api->server.setRemoteMaxConcurrent(4);
        m_api->server.setMaxQueued(32);
        QCOMPARE(requests().value("max_concurrent").toInt(), 4);
    }

    void remoteRefusingItsKeyIs502()
    {
        // The remote server comes back (same port) with another key: the client's own key
        // was right, so it gets no 401 but a 502 that says which key was refused.
        const int port = m_remote->port();
        m_remote->stop();
        QVERIFY2(m_remote->start(kR3, {"--model-id", "far-away", "--api-key", "sk-rotated"}, port), qPrintable(m_remote->error()));
        const HttpResult r = m_api->client->post("/v1/chat/completions", chat("hi", 4), {{"Authorization", "Bearer sk-local"}});
        QCOMPARE(r.status, 502);
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("remote_key_refused"));
        QVERIFY2(r.errorMessage().contains("refused the API key (HTTP 401)"), qPrintable(r.errorMessage()));
    }

    void remoteGoneIs502InWords()
    {
        m_remote->stop();
        const HttpResult r = m_api->client->post("/v1/chat/completions", chat("hi", 4), {{"Authorization", "Bearer sk-local"}});
        QCOMPARE(r.status, 502);
        QVERIFY2(r.errorMessage().contains("Nothing answers at " + m_remote->baseUrl()), qPrintable(r.errorMessage()));
        // The local server is still up.
        QCOMPARE(m_api->client->get("/health").status, 200);
    }
};

QTEST_GUILESS_MAIN(TestRemoteForward)
#include "tst_remote_forward.moc"
