// An OpenAI client that sends the conversation back, turn after turn, to the API server on
// the tiny K3 container: each turn reads only what the engine has not read (its state, or
// the checkpoint at the last answer's start when the client drops reasoning_content), and
// the server says so in usage.prompt_tokens_details.cached_tokens. Thinking off, thinking
// on with reasoning_content sent back, thinking on without it.
#include "apiservertestbed.h"
#include "engine/enginecontroller.h"
#include "server/apiserver.h"

#include <QTest>

namespace {

const QString kModel = QStringLiteral(WASTE_FIXTURES_DIR "/k3-container/k3s1.waste");

struct Turn {
    int promptTokens = 0;
    int cachedTokens = -1;
    bool hadReasoning = false;
};

} // namespace

class TestApiServerPrefix : public QObject {
    Q_OBJECT

    std::unique_ptr<ApiServerTestbed> m_api;

    QList<Turn> converse(const QString &opening, bool thinking, bool sendReasoning)
    {
        QList<Turn> turns;
        QJsonArray messages{QJsonObject{{"role", "system"}, {"content", opening}}};
        for (int i = 1; i <= 4; ++i) {
            messages.append(QJsonObject{{"role", "user"}, {"content", QStringLiteral("Question %1?").arg(i)}});
            const QJsonObject body{{"messages", messages}, {"max_tokens", 10}, {"temperature", 0.8},
                                   {"seed", 10 + i}, {"thinking", thinking}};
            const HttpResult r = m_api->client->post("/v1/chat/completions", body);
            if (r.status != 200) {
                qWarning("turn %d: %s", i, qPrintable(r.errorMessage()));
                return {};
            }
            const QJsonObject json = r.json();
            const QJsonObject usage = json.value("usage").toObject();
            const QJsonObject message = json.value("choices").toArray().at(0).toObject().value("message").toObject();
            Turn t;
            t.promptTokens = usage.value("prompt_tokens").toInt();
            t.cachedTokens = usage.value("prompt_tokens_details").toObject().value("cached_tokens").toInt(-1);
            t.hadReasoning = !message.value("reasoning_content").toString().isEmpty();
            turns << t;
            qInfo("thinking %s, reasoning %s: turn %d, prompt %d tokens, cached %d", thinking ? "on" : "off",
                  sendReasoning ? "sent back" : "dropped", i, t.promptTokens, t.cachedTokens);
            // What an OpenAI client keeps of the answer.
            QJsonObject back{{"role", "assistant"}, {"content", message.value("content").toString()}};
            if (sendReasoning && message.contains("reasoning_content"))
                back["reasoning_content"] = message.value("reasoning_content");
            messages.append(back);
        }
        return turns;
    }

    void check(const QList<Turn> &turns, bool answerStartOnly)
    {
        QCOMPARE(turns.size(), 4);
        QCOMPARE(turns[0].cachedTokens, 0);
        for (qsizetype i = 1; i < turns.size(); ++i) {
            const Turn &t = turns[i], &before = turns[i - 1];
            // Never less than the whole previous prompt (the state or the checkpoint at the
            // answer's start holds it), never the whole prompt (its new message is read).
            QVERIFY2(t.cachedTokens >= before.promptTokens,
                     qPrintable(QStringLiteral("turn %1: %2 cached of %3, previous prompt %4")
                                    .arg(i + 1).arg(t.cachedTokens).arg(t.promptTokens).arg(before.promptTokens)));
            QVERIFY(t.cachedTokens < t.promptTokens);
            // Reasoning dropped from the history: back to the answer's start exactly.
            if (answerStartOnly && before.hadReasoning)
                QCOMPARE(t.cachedTokens, before.promptTokens);
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_api = std::make_unique<ApiServerTestbed>();
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        m_api->engine.openModel(kModel, 0, 2048);
        QTRY_VERIFY_WITH_TIMEOUT(m_api->engine.state() == EngineController::Ready
                                     || m_api->engine.state() == EngineController::Failed, 60000);
        QVERIFY2(m_api->engine.state() == EngineController::Ready, qPrintable(m_api->engine.errorString()));
    }

    void cleanupTestCase() { m_api.reset(); }

    void thinkingOffReadsOnlyTheNewMessage() { check(converse("Alpha.", false, false), false); }

    void thinkingOnWithReasoningSentBack() { check(converse("Bravo.", true, true), false); }

    void thinkingOnWithoutReasoningGoesBackToTheAnswerStart()
    {
        const QList<Turn> turns = converse("Charlie.", true, false);
        check(turns, true);
        bool any = false; // the random model reasoned at least once: the checkpoint was used
        for (const Turn &t : turns.mid(0, 3))
            any = any || t.hadReasoning;
        QVERIFY(any);
    }
};

QTEST_GUILESS_MAIN(TestApiServerPrefix)
#include "tst_apiserver_prefix.moc"
