// Requests that arrive together are decoded together (engineworker.h, waste/batch.hpp):
// two concurrent streams give each the same tokens as alone, requests run together at the
// floor (their states in the room a prompt's pass leaves), /health reports
// the requests running and queued, and past the engine's places and the queue a request gets
// 503 server_busy. The engine thread is held for a moment (a queued call that waits) so that
// requests are known to arrive together, as they would behind a long step.
#include "apiservertestbed.h"
#include "engine/engineworker.h"

#include <waste/waste.hpp>

#include <QJsonArray>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>

#include <vector>

namespace {

const QString kModel = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");
constexpr int kCtx = 512;

QJsonObject completion(const QString &prompt, int seed, int maxTokens = 48)
{
    return {{"model", "r3"}, {"prompt", prompt}, {"max_tokens", maxTokens}, {"temperature", 0.9}, {"seed", seed}};
}

// What a completion gave: its text and token count.
struct Answer {
    int status = 0;
    QString text;
    int tokens = -1;
    bool operator==(const Answer &) const = default;
};

Answer answerOf(const HttpResult &r)
{
    const QJsonObject o = r.json();
    const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
    return {r.status, choice.value("text").toString(), o.value("usage").toObject().value("completion_tokens").toInt(-1)};
}

// Holds the engine thread until release(): what arrives meanwhile is seen together.
class EngineHold {
public:
    explicit EngineHold(EngineController &engine)
    {
        QMetaObject::invokeMethod(engine.worker(), [this] { m_gate.acquire(); }, Qt::QueuedConnection);
    }
    ~EngineHold() { release(); }
    void release()
    {
        if (!m_released)
            m_gate.release();
        m_released = true;
    }

private:
    QSemaphore m_gate;
    bool m_released = false;
};

} // namespace

class TestApiServerConcurrent : public QObject {
    Q_OBJECT

    std::unique_ptr<ApiServerTestbed> m_api;
    int m_mostRunning = 0;

private Q_SLOTS:
    void initTestCase()
    {
        m_api = std::make_unique<ApiServerTestbed>();
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        // The floor: its expert cache spares nothing, but the floor's prompt room holds more
        // full-context states than the places asked for (waste::batchShareAt).
        const waste::MemoryPlan plan = waste::planMemory(kModel.toStdString(), kCtx);
        m_api->engine.openModel(kModel, plan.floor_bytes, kCtx);
        QTRY_VERIFY_WITH_TIMEOUT(m_api->engine.state() == EngineController::Ready
                                     || m_api->engine.state() == EngineController::Failed, 60000);
        QVERIFY2(m_api->engine.state() == EngineController::Ready, qPrintable(m_api->engine.errorString()));
        QCOMPARE(m_api->engine.maxConcurrent(), EngineWorker::kSequencesWanted);
        connect(&m_api->engine, &EngineController::activeRequestsChanged, this,
                [this] { m_mostRunning = qMax(m_mostRunning, m_api->engine.runningRequests()); });
    }

    void cleanupTestCase() { m_api.reset(); }

    void twoConcurrentStreamsGiveWhatEachGivesAlone()
    {
        const QJsonObject a = completion("The quick brown fox", 11), b = completion("Once upon a time there", 12);
        const Answer aloneA = answerOf(m_api->client->post("/v1/completions", a));
        const Answer aloneB = answerOf(m_api->client->post("/v1/completions", b));
        QCOMPARE(aloneA.status, 200);
        QCOMPARE(aloneB.status, 200);
        QVERIFY(aloneA.tokens > 1 && aloneB.tokens > 1);

        m_mostRunning = 0;
        EngineHold hold(m_api->engine);
        QNetworkReply *ra = m_api->client->start("POST", "/v1/completions", QJsonDocument(a).toJson());
        QNetworkReply *rb = m_api->client->start("POST", "/v1/completions", QJsonDocument(b).toJson());
        QTRY_COMPARE_WITH_TIMEOUT(m_api->engine.activeRequests(), 2, 10000);
        hold.release();
        const Answer togetherA = answerOf(HttpTestClient::wait(ra)), togetherB = answerOf(HttpTestClient::wait(rb));
        QCOMPARE(m_mostRunning, 2); // they were decoded together
        QCOMPARE(togetherA, aloneA);
        QCOMPARE(togetherB, aloneB);
    }

    // At the floor, requests short and full-context (max_tokens to the context's end) run
    // together, their states in the room a prompt's pass leaves while they decode (how short
    // ones share a room too small for full-context ones: tst_batch, ShortSequences…).
    void requestsRunTogetherAtTheFloor()
    {
        for (const int maxTokens : {48, kCtx}) {
            m_mostRunning = 0;
            QNetworkReply *replies[3];
            {
                EngineHold hold(m_api->engine);
                for (int i = 0; i < 3; ++i)
                    replies[i] = m_api->client->start(
                        "POST", "/v1/completions",
                        QJsonDocument(completion("Share " + QString::number(i), 20 + i, maxTokens)).toJson());
                QTRY_COMPARE_WITH_TIMEOUT(m_api->engine.activeRequests(), 3, 10000);
            }
            for (QNetworkReply *r : replies)
                QCOMPARE(HttpTestClient::wait(r).status, 200);
            QCOMPARE(m_mostRunning, 3);
        }
    }

    void healthCountsAndAFullQueueGives503()
    {
        m_api->server.setMaxQueued(1);
        const int places = m_api->engine.maxConcurrent();
        std::vector<QNetworkReply *> replies;
        // Qt's HTTP client opens at most 6 connections to a host: a second one for the rest.
        HttpTestClient more(m_api->server.boundPort());
        {
            EngineHold hold(m_api->engine);
            for (int i = 0; i < places + 1; ++i)
                replies.push_back((i < 4 ? *m_api->client : more)
                                      .start("POST", "/v1/completions",
                                             QJsonDocument(completion("Count: " + QString::number(i), i, 8)).toJson()));
            QTRY_COMPARE_WITH_TIMEOUT(m_api->engine.activeRequests(), places + 1, 10000);
            const QJsonObject health = m_api->client->get("/health").json();
            const QJsonObject requests = health.value("requests").toObject();
            QCOMPARE(requests.value("running").toInt(), 0); // the engine has not seen them yet
            QCOMPARE(requests.value("queued").toInt(), places + 1);
            QCOMPARE(requests.value("max_concurrent").toInt(), places);
            QCOMPARE(requests.value("max_queued").toInt(), 1);

            const HttpResult busy = m_api->client->post("/v1/completions", completion("One too many", 9));
            QCOMPARE(busy.status, 503);
            QCOMPARE(busy.json().value("error").toObject().value("code").toString(), QStringLiteral("server_busy"));
            QVERIFY2(busy.errorMessage().contains("busy") && busy.errorMessage().contains("Try again"),
                     qPrintable(busy.errorMessage()));
            QCOMPARE(busy.header("Retry-After"), QByteArray("1"));
            // Anthropic's shape for the same refusal.
            const HttpResult busyMessages = m_api->client->post(
                "/v1/messages", QJsonObject{{"model", "r3"},
                                            {"max_tokens", 4},
                                            {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Hi"}}}}});
            QCOMPARE(busyMessages.status, 503);
            QCOMPARE(busyMessages.json().value("type").toString(), QStringLiteral("error"));
        }
        for (QNetworkReply *r : replies)
            QCOMPARE(HttpTestClient::wait(r).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(m_api->engine.activeRequests(), 0, 10000);
        const QJsonObject after = m_api->client->get("/health").json().value("requests").toObject();
        QCOMPARE(after.value("running").toInt(), 0);
        QCOMPARE(after.value("queued").toInt(), 0);
        // Room again.
        QCOMPARE(m_api->client->post("/v1/completions", completion("Room again", 5)).status, 200);
        m_api->server.setMaxQueued(32);
    }
};

QTEST_GUILESS_MAIN(TestApiServerConcurrent)
#include "tst_apiserver_concurrent.moc"
