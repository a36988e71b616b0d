// The API server on the tiny K3 container (random weights): replies come back split into
// reasoning_content, content and tool_calls by K3's token-level parser, streaming and not.
// Random weights never write structure on their own, so structure is forced: tool_choice
// required / named (a K3 call element) and response_format json_schema (the response
// channel), with the think channel on and off.
#include "apiservertestbed.h"
#include "engine/enginecontroller.h"
#include "server/apiserver.h"

#include <QSignalSpy>
#include <QTest>

namespace {

const QString kModel = QStringLiteral(WASTE_FIXTURES_DIR "/k3-container/k3s1.waste");

const QJsonArray kTools = QJsonDocument::fromJson(R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather for a city",
   "parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},
     "unit":{"enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{},
     "additionalProperties":false}}}])").array();

QJsonObject chat(const QString &text, int maxTokens, bool thinking, quint64 seed)
{
    return {{"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", text}}}},
            {"max_tokens", maxTokens},
            {"temperature", 1.0},
            {"seed", double(seed)},
            {"thinking", thinking}};
}

// Checks a call against kTools; empty when it is fine.
QString callProblem(const QJsonObject &call)
{
    if (!call.value("id").toString().startsWith("call_") || call.value("type").toString() != "function")
        return QStringLiteral("bad id or type");
    const QJsonObject fn = call.value("function").toObject();
    if (!fn.value("arguments").isString())
        return QStringLiteral("arguments are not a JSON string");
    const QJsonDocument args = QJsonDocument::fromJson(fn.value("arguments").toString().toUtf8());
    if (!args.isObject())
        return QStringLiteral("arguments do not parse: ") + fn.value("arguments").toString();
    const QJsonObject a = args.object();
    if (fn.value("name") == "get_time")
        return a.isEmpty() ? QString() : QStringLiteral("get_time takes no arguments");
    if (fn.value("name") != "get_weather")
        return QStringLiteral("unknown tool ") + fn.value("name").toString();
    if (a.size() != 2 || !a.value("city").isString() || a.value("city").toString().size() > 12)
        return QStringLiteral("bad city");
    if (a.value("unit") != "c" && a.value("unit") != "f")
        return QStringLiteral("bad unit");
    return {};
}

struct Streamed {
    QList<QJsonObject> deltas; // choices[0].delta of every chunk
    QString reasoning, content, finish;
    QJsonArray calls;
    bool done = false;
};

Streamed readStream(HttpTestClient &client, QJsonObject body)
{
    body["stream"] = true;
    const HttpResult r = client.post("/v1/chat/completions", body);
    Streamed s;
    for (const QByteArray &e : sseData(r.body)) {
        if (e == "[DONE]") {
            s.done = true;
            continue;
        }
        const QJsonObject choice = QJsonDocument::fromJson(e).object().value("choices").toArray().at(0).toObject();
        const QJsonObject d = choice.value("delta").toObject();
        s.deltas << d;
        s.reasoning += d.value("reasoning_content").toString();
        s.content += d.value("content").toString();
        for (const QJsonValue &c : d.value("tool_calls").toArray())
            s.calls.append(c);
        if (choice.value("finish_reason").isString())
            s.finish = choice.value("finish_reason").toString();
    }
    return s;
}

} // namespace

class TestApiServerK3 : public QObject {
    Q_OBJECT

    std::unique_ptr<ApiServerTestbed> m_api;

private Q_SLOTS:
    void initTestCase()
    {
        m_api = std::make_unique<ApiServerTestbed>();
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        m_api->engine.openModel(kModel, 0, 1024);
        QTRY_VERIFY_WITH_TIMEOUT(m_api->engine.state() == EngineController::Ready
                                     || m_api->engine.state() == EngineController::Failed, 60000);
        QVERIFY2(m_api->engine.state() == EngineController::Ready, qPrintable(m_api->engine.errorString()));
    }

    void cleanupTestCase()
    {
        m_api.reset();
    }

    void forcedToolCallsComeBackParsed()
    {
        for (quint64 seed = 1; seed <= 4; ++seed) {
            const bool thinking = seed % 2 == 0;
            QJsonObject body = chat("Weather in Oslo?", 140, thinking, seed); // the byte-level tiny vocabulary needs 87 tokens for the call
            body["tools"] = kTools;
            body["tool_choice"] = seed <= 2 ? QJsonValue("required")
                                            : QJsonValue(QJsonObject{{"type", "function"},
                                                                     {"function", QJsonObject{{"name", "get_weather"}}}});
            const HttpResult r = m_api->client->post("/v1/chat/completions", body);
            QVERIFY2(r.status == 200, qPrintable(r.errorMessage()));
            const QJsonObject choice = r.json().value("choices").toArray().at(0).toObject();
            QCOMPARE(choice.value("finish_reason").toString(), QStringLiteral("tool_calls"));
            const QJsonObject msg = choice.value("message").toObject();
            QVERIFY2(msg.value("content").isNull(), qPrintable(msg.value("content").toString()));
            if (!thinking)
                QVERIFY(!msg.contains("reasoning_content"));
            const QJsonArray calls = msg.value("tool_calls").toArray();
            QCOMPARE(calls.size(), 1);
            const QString problem = callProblem(calls.at(0).toObject());
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            if (seed > 2)
                QCOMPARE(calls.at(0).toObject().value("function").toObject().value("name").toString(),
                         QStringLiteral("get_weather"));
            QVERIFY(r.json().value("usage").toObject().value("completion_tokens").toInt() <= 140);

            // The same request streamed (same seed, same tokens): reasoning as it comes, the
            // call once complete, then the finish reason.
            const Streamed s = readStream(*m_api->client, body);
            QVERIFY(s.done);
            QCOMPARE(s.finish, QStringLiteral("tool_calls"));
            QCOMPARE(s.reasoning, msg.value("reasoning_content").toString());
            QVERIFY(s.content.isEmpty());
            QCOMPARE(s.calls.size(), 1);
            const QJsonObject streamedCall = s.calls.at(0).toObject();
            QCOMPARE(streamedCall.value("index").toInt(-1), 0);
            QCOMPARE(streamedCall.value("function").toObject(), calls.at(0).toObject().value("function").toObject());
            int callAt = -1, lastReasoning = -1;
            for (int i = 0; i < s.deltas.size(); ++i) {
                if (s.deltas[i].contains("tool_calls"))
                    callAt = i;
                if (s.deltas[i].contains("reasoning_content"))
                    lastReasoning = i;
            }
            QVERIFY(callAt > 0);
            QVERIFY(lastReasoning < callAt);
        }
    }

    void jsonResponsesFillTheContent()
    {
        const QJsonObject schema = QJsonDocument::fromJson(R"({"type":"object","properties":{
            "name":{"type":"string","maxLength":10},"age":{"type":"integer"}},
            "required":["name","age"],"additionalProperties":false})").object();
        for (quint64 seed = 1; seed <= 4; ++seed) {
            QJsonObject body = chat("Describe someone.", 70, seed % 2 == 0, seed);
            body["response_format"] = QJsonObject{
                {"type", "json_schema"}, {"json_schema", QJsonObject{{"name", "p"}, {"strict", true}, {"schema", schema}}}};
            const HttpResult r = m_api->client->post("/v1/chat/completions", body);
            QCOMPARE(r.status, 200);
            const QJsonObject choice = r.json().value("choices").toArray().at(0).toObject();
            QCOMPARE(choice.value("finish_reason").toString(), QStringLiteral("stop"));
            const QString content = choice.value("message").toObject().value("content").toString();
            const QJsonObject o = QJsonDocument::fromJson(content.toUtf8()).object();
            QVERIFY2(o.size() == 2 && o.value("name").isString() && o.value("age").isDouble(), qPrintable(content));
            QVERIFY2(!content.contains("<|"), qPrintable(content)); // no markup leaks into the answer
            const Streamed s = readStream(*m_api->client, body);
            QCOMPARE(s.content, content);
        }
    }

    void freeRepliesStreamLikeTheWholeAnswer()
    {
        // Thinking on (K3's default): whatever the random model writes is reasoning until it
        // closes the think channel; the streamed pieces add up to the whole answer.
        QJsonObject body = chat("Hello", 40, true, 3);
        body.remove("thinking");
        const HttpResult r = m_api->client->post("/v1/chat/completions", body);
        QCOMPARE(r.status, 200);
        const QJsonObject msg = r.json().value("choices").toArray().at(0).toObject().value("message").toObject();
        QVERIFY(msg.value("content").isString());
        const Streamed s = readStream(*m_api->client, body);
        QVERIFY(s.done);
        QCOMPARE(s.reasoning, msg.value("reasoning_content").toString());
        QCOMPARE(s.content, msg.value("content").toString());
        QVERIFY(!s.reasoning.isEmpty() || !s.content.isEmpty());
        // No K3 markup reaches the client as text.
        QVERIFY(!s.content.contains("<|open|>") && !s.reasoning.contains("<|open|>"));
    }

    void reasoningTokensAreCounted()
    {
        // usage.completion_tokens_details.reasoning_tokens: the tokens up to the last one that
        // added to reasoning_content. None with thinking off; with it on, some, never more than
        // the completion, and fewer when an answer followed. The Responses API reports the same
        // count for its reasoning item.
        for (quint64 seed = 1; seed <= 4; ++seed) {
            for (const bool thinking : {false, true}) {
                const HttpResult r = m_api->client->post("/v1/chat/completions", chat("Hello", 40, thinking, seed));
                QCOMPARE(r.status, 200);
                const QJsonObject msg = r.json().value("choices").toArray().at(0).toObject().value("message").toObject();
                const QJsonObject usage = r.json().value("usage").toObject();
                const int completion = usage.value("completion_tokens").toInt();
                const int reasoning = usage.value("completion_tokens_details").toObject().value("reasoning_tokens").toInt(-1);
                const QString why = QStringLiteral("seed %1 thinking %2: %3 of %4, reasoning '%5', content '%6'")
                                        .arg(seed).arg(thinking).arg(reasoning).arg(completion)
                                        .arg(msg.value("reasoning_content").toString(), msg.value("content").toString());
                if (msg.value("reasoning_content").toString().isEmpty()) {
                    QVERIFY2(reasoning == 0, qPrintable(why));
                    continue;
                }
                QVERIFY2(reasoning > 0 && reasoning <= completion, qPrintable(why));
                if (!msg.value("content").toString().isEmpty())
                    QVERIFY2(reasoning < completion, qPrintable(why));
            }
        }
        const QJsonObject body{{"input", "Hello"}, {"max_output_tokens", 40}, {"temperature", 0},
                               {"reasoning", QJsonObject{{"effort", "high"}}}};
        const HttpResult r = m_api->client->post("/v1/responses", body);
        QCOMPARE(r.status, 200);
        QString reasoningText;
        for (const QJsonValue &item : r.json().value("output").toArray())
            if (item.toObject().value("type").toString() == QLatin1String("reasoning"))
                for (const QJsonValue &part : item.toObject().value("content").toArray())
                    reasoningText += part.toObject().value("text").toString();
        const QJsonObject usage = r.json().value("usage").toObject();
        const int reasoning = usage.value("output_tokens_details").toObject().value("reasoning_tokens").toInt(-1);
        QVERIFY2(!reasoningText.isEmpty(), "the model was asked to think: a reasoning item");
        QVERIFY2(reasoning > 0 && reasoning <= usage.value("output_tokens").toInt(), qPrintable(QString::number(reasoning)));
    }

    void tooFewTokensForTheStructureIs400()
    {
        QJsonObject body = chat("Weather?", 8, false, 1);
        body["tools"] = kTools;
        body["tool_choice"] = "required";
        const HttpResult r = m_api->client->post("/v1/chat/completions", body);
        QCOMPARE(r.status, 400);
        QVERIFY2(r.errorMessage().contains("at least"), qPrintable(r.errorMessage()));
        QCOMPARE(r.errorType(), QStringLiteral("invalid_request_error"));
        QCOMPARE(r.errorParam(), QStringLiteral("max_tokens"));
        QCOMPARE(m_api->client->get("/health").status, 200);
    }
};

QTEST_GUILESS_MAIN(TestApiServerK3)
#include "tst_apiserver_k3.moc"
