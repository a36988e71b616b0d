// A long prompt through the API server (issue 36 items 6 and 7). The prompt cache on disk: a
// second request with the same system prompt and tools reads none of them again (cached_tokens,
// cache_read_input_tokens), also after a restart, with the answer a fresh read gives; an entry
// cut short (a kill mid-write) or damaged is never used. The keep-alive: while the engine reads, a
// streaming answer is kept alive (Chat Completions and Responses: SSE comments, which every
// SSE reader skips; Messages: ping events, as Anthropic's API sends), and a request that does
// not stream simply waits: the server sets no time limit of its own. The reference container
// r3 reads a ~12,000-token prompt in a second or two; the keep-alive interval is made short.
#include "apiservertestbed.h"
#include "engine/enginecontroller.h"
#include "longpaste.h"
#include "server/apiserver.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kModel = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");

QJsonArray userMessage(const QString &title)
{
    return QJsonArray{QJsonObject{{"role", "user"}, {"content", longPaste(title)}}};
}

// Where `needle` first occurs, and how often.
std::pair<qsizetype, int> find(const QByteArray &body, const QByteArray &needle)
{
    return {body.indexOf(needle), int(body.count(needle))};
}

// An agent's opening: a long system prompt and a tool, then a short question.
QJsonObject agentRequest(const QString &question)
{
    QString system = QStringLiteral("You are a careful assistant. ");
    for (int i = 0; i < 40; ++i)
        system += QStringLiteral("Rule %1: answer in one sentence and cite the tool you used. ").arg(i);
    const QJsonObject word{{"type", "string"}};
    const QJsonObject parameters{{"type", "object"}, {"properties", QJsonObject{{"word", word}}}};
    const QJsonObject function{{"name", "lookup"}, {"description", "Looks a word up in the dictionary."},
                               {"parameters", parameters}};
    const QJsonObject tool{{"type", "function"}, {"function", function}};
    return {{"messages", QJsonArray{QJsonObject{{"role", "system"}, {"content", system}},
                                    QJsonObject{{"role", "user"}, {"content", question}}}},
            {"tools", QJsonArray{tool}},
            {"max_tokens", 6},
            {"temperature", 0}};
}

struct Answer {
    int status = 0;
    int promptTokens = 0;
    int cachedTokens = -1;
    QString content;
};

Answer ask(ApiServerTestbed &api, const QString &question)
{
    const HttpResult r = api.client->post("/v1/chat/completions", agentRequest(question), {}, 120000);
    Answer a;
    a.status = r.status;
    const QJsonObject usage = r.json().value("usage").toObject();
    a.promptTokens = usage.value("prompt_tokens").toInt();
    a.cachedTokens = usage.value("prompt_tokens_details").toObject().value("cached_tokens").toInt(-1);
    a.content = r.json().value("choices").toArray().at(0).toObject().value("message").toObject().value("content").toString();
    return a;
}

std::unique_ptr<ApiServerTestbed> openTestbed(const QString &cacheDir)
{
    auto api = std::make_unique<ApiServerTestbed>();
    if (!cacheDir.isEmpty())
        api->engine.setPromptCache(cacheDir, qint64(1) << 30);
    if (!api->listen())
        return {};
    api->engine.openModel(kModel, 0, 16384);
    (void)QTest::qWaitFor([&] { return api->engine.state() == EngineController::Ready || api->engine.state() == EngineController::Failed; },
                    60000);
    if (api->engine.state() != EngineController::Ready)
        return {};
    return api;
}

QStringList entries(const QString &dir)
{
    return QDir(dir).entryList({QStringLiteral("*.state")}, QDir::Files);
}

} // namespace

class TestApiServerLongPrompt : public QObject {
    Q_OBJECT

    std::unique_ptr<ApiServerTestbed> m_api;

private Q_SLOTS:
    void initTestCase()
    {
        m_api = std::make_unique<ApiServerTestbed>();
        m_api->server.setKeepAliveMs(40);
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        m_api->engine.openModel(kModel, 0, 16384);
        QTRY_VERIFY_WITH_TIMEOUT(m_api->engine.state() == EngineController::Ready
                                     || m_api->engine.state() == EngineController::Failed, 60000);
        QVERIFY2(m_api->engine.state() == EngineController::Ready, qPrintable(m_api->engine.errorString()));
    }

    void cleanupTestCase() { m_api.reset(); }

    void theSameSystemPromptAndToolsAreReadOnce()
    {
        QTemporaryDir tmp;
        const QString cache = tmp.filePath(QStringLiteral("prompt-cache"));
        // Without the cache: the state holds the first request, which the second does not
        // extend, so it reads everything again. The fresh read's answer is the reference.
        std::unique_ptr<ApiServerTestbed> plain = openTestbed({});
        QVERIFY(plain);
        QCOMPARE(ask(*plain, QStringLiteral("What is a fox?")).status, 200);
        const Answer reference = ask(*plain, QStringLiteral("And a dog?"));
        QCOMPARE(reference.status, 200);
        QCOMPARE(reference.cachedTokens, 0);
        plain.reset();

        std::unique_ptr<ApiServerTestbed> api = openTestbed(cache);
        QVERIFY(api);
        const Answer first = ask(*api, QStringLiteral("What is a fox?"));
        QCOMPARE(first.status, 200);
        QCOMPARE(first.cachedTokens, 0);
        QCOMPARE(entries(cache).size(), 1); // the state after the system prompt and tools
        const QString entry = QDir(cache).filePath(entries(cache).value(0));
        const Answer second = ask(*api, QStringLiteral("And a dog?"));
        QCOMPARE(second.status, 200);
        // Everything before the question came from the cache: the system prompt and tools
        // are most of the prompt; only the question and the template's closing are read.
        QVERIFY2(second.cachedTokens > 600 && second.cachedTokens > second.promptTokens - 30,
                 qPrintable(QStringLiteral("%1 of %2 cached").arg(second.cachedTokens).arg(second.promptTokens)));
        QCOMPARE(second.promptTokens, reference.promptTokens);
        QCOMPARE(second.content, reference.content); // the same logits as a fresh read: greedy agrees
        QCOMPARE(entries(cache).size(), 1);           // kept once
        // Messages says it its own way (its request renders its own prompt: one entry more).
        auto messagesAsk = [&](const QString &question) {
            const QJsonObject openai = agentRequest(question);
            const QJsonObject body{
                {"model", "r3"},
                {"max_tokens", 4},
                {"system", openai["messages"].toArray().at(0).toObject().value("content")},
                {"messages", QJsonArray{openai["messages"].toArray().at(1)}},
                {"tools", QJsonArray{QJsonObject{{"name", "lookup"},
                                                 {"description", "Looks a word up in the dictionary."},
                                                 {"input_schema", QJsonObject{{"type", "object"}}}}}}};
            const HttpResult r = api->client->post("/v1/messages", body, {}, 120000);
            return r.status == 200 ? r.json().value("usage").toObject().value("cache_read_input_tokens").toInt(-1) : -1;
        };
        QCOMPARE(messagesAsk(QStringLiteral("And a cat?")), 0);
        QVERIFY(messagesAsk(QStringLiteral("And a bird?")) > 600);
        QCOMPARE(entries(cache).size(), 2);
        api.reset();

        // A restart: a new engine and server find the entry on disk.
        api = openTestbed(cache);
        QVERIFY(api);
        const Answer again = ask(*api, QStringLiteral("And a dog?"));
        QCOMPARE(again.status, 200);
        QCOMPARE(again.cachedTokens, second.cachedTokens);
        QCOMPARE(again.content, reference.content);
        api.reset();

        // A write cut short by a kill leaves a state without its record: never used, removed.
        QVERIFY(QFile::copy(entry, QDir(cache).filePath(QStringLiteral("cut-short.state"))));
        // And an entry damaged on disk (its state cut in half) is not used either.
        {
            QFile f(entry);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.resize(f.size() / 2));
        }
        api = openTestbed(cache);
        QVERIFY(api);
        const Answer afterDamage = ask(*api, QStringLiteral("And a dog?"));
        QCOMPARE(afterDamage.status, 200);
        QCOMPARE(afterDamage.cachedTokens, 0);
        QCOMPARE(afterDamage.content, reference.content);
        QVERIFY(!QFile::exists(QDir(cache).filePath(QStringLiteral("cut-short.state"))));
        // The damaged entry is gone and the prefix kept again, whole.
        QCOMPARE(entries(cache).size(), 2);
        QVERIFY(QFileInfo(entry).size() > 0);
    }

    void chatStreamIsKeptAliveWhileReading()
    {
        const QJsonObject body{{"messages", userMessage("Chat")}, {"max_tokens", 4}, {"stream", true}, {"seed", 1}};
        const HttpResult r = m_api->client->post("/v1/chat/completions", body, {}, 120000);
        QCOMPARE(r.status, 200);
        const auto [at, count] = find(r.body, ": reading the prompt\n\n");
        QVERIFY2(count >= 2, r.body.left(400).constData());
        // The comments come while the prompt is read: before the first word of the answer.
        const qsizetype firstWord = r.body.indexOf("\"content\":\"", r.body.indexOf("\"content\":\"") + 1);
        QVERIFY(firstWord < 0 || at < firstWord);
        bool framed = false;
        const QList<QByteArray> events = sseData(r.body, &framed);
        QVERIFY(framed);
        QCOMPARE(events.last(), QByteArray("[DONE]"));
    }

    void messagesStreamPingsWhileReading()
    {
        const QJsonObject body{{"model", "r3"}, {"messages", userMessage("Messages")}, {"max_tokens", 4}, {"stream", true}};
        const HttpResult r = m_api->client->post("/v1/messages", body, {}, 120000);
        QCOMPARE(r.status, 200);
        // One ping opens every Messages stream; the read adds more before the first block.
        const auto [at, count] = find(r.body, "event: ping\n");
        QVERIFY2(count >= 3, r.body.left(600).constData());
        QVERIFY(r.body.contains("event: message_stop"));
        Q_UNUSED(at);
    }

    void responsesStreamIsKeptAliveWhileReading()
    {
        const QJsonObject body{{"input", longPaste("Responses")}, {"max_output_tokens", 4}, {"stream", true}};
        const HttpResult r = m_api->client->post("/v1/responses", body, {}, 120000);
        QCOMPARE(r.status, 200);
        QVERIFY2(find(r.body, ": reading the prompt\n\n").second >= 2, r.body.left(400).constData());
        QVERIFY2(r.body.contains("response.completed") || r.body.contains("response.incomplete"), r.body.right(600).constData());
    }

    void aRequestThatDoesNotStreamWaits()
    {
        // A new prompt (the state holds the others): read whole, answered whole.
        QJsonArray messages{QJsonObject{{"role", "user"}, {"content", longPaste("Whole")}}};
        const QJsonObject body{{"messages", messages}, {"max_tokens", 4}};
        const HttpResult r = m_api->client->post("/v1/chat/completions", body, {}, 120000);
        QCOMPARE(r.status, 200);
        QVERIFY(r.json().value("usage").toObject().value("prompt_tokens").toInt() > 10000);
        QVERIFY(!r.body.contains(": reading"));
    }
};

QTEST_GUILESS_MAIN(TestApiServerLongPrompt)
#include "tst_apiserver_long_prompt.moc"
