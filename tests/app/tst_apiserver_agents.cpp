// The Responses and Messages APIs end to end on a real model (the reference container
// r3.waste, random weights) over real sockets: whole and streamed replies that agree, event
// sequences, previous_response_id and store: false, forced function calls and tool_use, the
// stop reasons, count_tokens, x-api-key, and errors in each API's own shape.
#include "apiservertestbed.h"

#include <QTest>

#include <algorithm>

namespace {

const QString kModel = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");

QJsonObject with(QJsonObject o, const QString &key, const QJsonValue &v)
{
    o.insert(key, v);
    return o;
}

// A named-event SSE body: (event name, payload), checking the framing on the way.
struct Events {
    QList<QPair<QString, QJsonObject>> list;
    bool framed = true;

    QStringList names() const
    {
        QStringList n;
        for (const auto &e : list)
            n << e.first;
        return n;
    }
    QJsonObject last(const QString &name) const
    {
        for (qsizetype i = list.size() - 1; i >= 0; --i)
            if (list[i].first == name)
                return list[i].second;
        return {};
    }
};

Events readEvents(const QByteArray &body)
{
    Events ev;
    QString name;
    for (const QByteArray &line : body.split('\n')) {
        if (line.startsWith("event: ")) {
            name = QString::fromUtf8(line.mid(7));
        } else if (line.startsWith("data: ")) {
            const QJsonObject o = QJsonDocument::fromJson(line.mid(6)).object();
            ev.framed = ev.framed && !name.isEmpty() && o.value("type").toString() == name;
            ev.list.append({name, o});
            name.clear();
        } else if (!line.isEmpty()) {
            ev.framed = false;
        }
    }
    return ev;
}

const QJsonArray kFunctionTools = QJsonDocument::fromJson(R"([
  {"type":"function","name":"get_weather","description":"Weather for a city",
   "parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":20},
     "unit":{"enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}},
  {"type":"function","name":"get_time","parameters":{"type":"object","properties":{},"additionalProperties":false}}])").array();

const QJsonArray kAnthropicTools = QJsonDocument::fromJson(R"([
  {"name":"get_weather","description":"Weather for a city",
   "input_schema":{"type":"object","properties":{"city":{"type":"string","maxLength":20},
     "unit":{"enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}])").array();

QString outputText(const QJsonObject &response)
{
    QString text;
    for (const QJsonValue &item : response.value("output").toArray())
        if (item.toObject().value("type").toString() == QLatin1String("message"))
            for (const QJsonValue &part : item.toObject().value("content").toArray())
                text += part.toObject().value("text").toString();
    return text;
}

QString messageText(const QJsonObject &message)
{
    QString text;
    for (const QJsonValue &block : message.value("content").toArray())
        text += block.toObject().value("text").toString();
    return text;
}

} // namespace

class TestApiServerAgents : public QObject {
    Q_OBJECT

    std::unique_ptr<ApiServerTestbed> m_api;

    HttpResult post(const QString &path, const QJsonObject &body, const QList<QPair<QByteArray, QByteArray>> &h = {})
    {
        return m_api->client->post(path, body, h);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_api = std::make_unique<ApiServerTestbed>();
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        // Before a model is open, each API says so in its own shape.
        const HttpResult none = post("/v1/messages", {{"max_tokens", 4}, {"messages", QJsonArray{QJsonObject{
                                                          {"role", "user"}, {"content", "hi"}}}}});
        QCOMPARE(none.status, 503);
        QCOMPARE(none.json().value("type").toString(), QStringLiteral("error"));
        QCOMPARE(none.json().value("error").toObject().value("type").toString(), QStringLiteral("overloaded_error"));
        const HttpResult noneR = post("/v1/responses", {{"input", "hi"}});
        QCOMPARE(noneR.status, 503);
        QCOMPARE(noneR.json().value("error").toObject().value("code").toString(), QStringLiteral("model_not_ready"));

        m_api->engine.openModel(kModel, 0, 2048);
        QTRY_VERIFY_WITH_TIMEOUT(m_api->engine.state() == EngineController::Ready
                                     || m_api->engine.state() == EngineController::Failed, 60000);
        QVERIFY2(m_api->engine.state() == EngineController::Ready, qPrintable(m_api->engine.errorString()));
    }

    void cleanupTestCase() { m_api.reset(); }

    void responseWholeAndStreamedAgree()
    {
        const QJsonObject body{{"model", "r3"}, {"instructions", "You are terse."}, {"input", "Tell me a story."},
                               {"max_output_tokens", 24}, {"temperature", 0}};
        const HttpResult whole = post("/v1/responses", body);
        QCOMPARE(whole.status, 200);
        const QJsonObject r = whole.json();
        QVERIFY(r.value("id").toString().startsWith("resp_"));
        QCOMPARE(r.value("object").toString(), QStringLiteral("response"));
        QCOMPARE(r.value("model").toString(), QStringLiteral("r3"));
        QVERIFY(QStringList({"completed", "incomplete"}).contains(r.value("status").toString()));
        const QJsonObject usage = r.value("usage").toObject();
        QVERIFY(usage.value("input_tokens").toInt() > 5);
        QVERIFY(usage.value("output_tokens").toInt() <= 24);
        QCOMPARE(usage.value("total_tokens").toInt(), usage.value("input_tokens").toInt() + usage.value("output_tokens").toInt());
        if (r.value("status").toString() == QLatin1String("incomplete"))
            QCOMPARE(r.value("incomplete_details").toObject().value("reason").toString(), QStringLiteral("max_output_tokens"));

        const HttpResult streamed = post("/v1/responses", with(body, "stream", true));
        QCOMPARE(streamed.status, 200);
        QVERIFY(streamed.header("content-type").startsWith("text/event-stream"));
        const Events ev = readEvents(streamed.body);
        QVERIFY(ev.framed);
        QVERIFY(ev.list.size() >= 4);
        QCOMPARE(ev.list[0].first, QStringLiteral("response.created"));
        QCOMPARE(ev.list[1].first, QStringLiteral("response.in_progress"));
        QString deltas;
        for (int i = 0; i < ev.list.size(); ++i) {
            QCOMPARE(ev.list[i].second.value("sequence_number").toInt(-1), i);
            if (ev.list[i].first == QLatin1String("response.output_text.delta"))
                deltas += ev.list[i].second.value("delta").toString();
        }
        const QJsonObject done = ev.list.last().second.value("response").toObject();
        QCOMPARE(ev.list.last().first, QStringLiteral("response.") + r.value("status").toString());
        QCOMPARE(deltas, outputText(r)); // greedy: the same answer
        QCOMPARE(outputText(done), outputText(r));
        // The streamed request repeats a prompt just read: it may be reported cached.
        QJsonObject streamedUsage = done.value("usage").toObject(), wholeUsage = usage;
        streamedUsage.remove(QStringLiteral("input_tokens_details"));
        wholeUsage.remove(QStringLiteral("input_tokens_details"));
        QCOMPARE(streamedUsage, wholeUsage);
    }

    void previousResponseIdContinuesAndStoreFalseForgets()
    {
        const HttpResult first = post("/v1/responses", {{"input", "My name is Ada."}, {"max_output_tokens", 6},
                                                        {"temperature", 0}});
        QCOMPARE(first.status, 200);
        const QString id = first.json().value("id").toString();
        const int firstPrompt = first.json().value("usage").toObject().value("input_tokens").toInt();
        const HttpResult next = post("/v1/responses", {{"input", "What is my name?"}, {"previous_response_id", id},
                                                       {"max_output_tokens", 6}, {"temperature", 0}});
        QCOMPARE(next.status, 200);
        QCOMPARE(next.json().value("previous_response_id").toString(), id);
        // The earlier turn is in the prompt: it is longer than the first one and its answer.
        QVERIFY(next.json().value("usage").toObject().value("input_tokens").toInt()
                > firstPrompt + first.json().value("usage").toObject().value("output_tokens").toInt());

        const HttpResult forgotten = post("/v1/responses", {{"input", "x"}, {"store", false}, {"max_output_tokens", 2}});
        QCOMPARE(forgotten.status, 200);
        QCOMPARE(forgotten.json().value("store").toBool(true), false);
        const HttpResult missing = post("/v1/responses", {{"input", "y"},
                                                          {"previous_response_id", forgotten.json().value("id")}});
        QCOMPARE(missing.status, 400);
        QCOMPARE(missing.errorParam(), QStringLiteral("previous_response_id"));
        QCOMPARE(missing.json().value("error").toObject().value("code").toString(),
                 QStringLiteral("previous_response_not_found"));
    }

    void storedResponsesAreReadBackAndDeleted()
    {
        // GET /v1/responses/{id} gives the response exactly as it was answered, whole or
        // streamed; DELETE forgets it (OpenAI's deletion object), after which both are 404
        // and previous_response_id no longer finds it.
        const HttpResult whole = post("/v1/responses", {{"input", "Hi there"}, {"max_output_tokens", 5}, {"temperature", 0}});
        QCOMPARE(whole.status, 200);
        const QString id = whole.json().value("id").toString();
        const HttpResult got = m_api->client->get("/v1/responses/" + id);
        QCOMPARE(got.status, 200);
        QCOMPARE(got.json(), whole.json());
        QCOMPARE(m_api->client->get("/responses/" + id).json(), whole.json()); // the alias without /v1

        const HttpResult streamed = post("/v1/responses", {{"input", "Hi again"}, {"max_output_tokens", 5},
                                                           {"temperature", 0}, {"stream", true}});
        QCOMPARE(streamed.status, 200);
        const QJsonObject last = readEvents(streamed.body).list.last().second.value("response").toObject();
        const HttpResult gotStreamed = m_api->client->get("/v1/responses/" + last.value("id").toString());
        QCOMPARE(gotStreamed.status, 200);
        QCOMPARE(gotStreamed.json(), last);

        const HttpResult deleted = m_api->client->call("DELETE", "/v1/responses/" + id);
        QCOMPARE(deleted.status, 200);
        QCOMPARE(deleted.json(), (QJsonObject{{"id", id}, {"object", "response"}, {"deleted", true}}));
        for (const QByteArray verb : {QByteArrayLiteral("GET"), QByteArrayLiteral("DELETE")}) {
            const HttpResult gone = m_api->client->call(verb, "/v1/responses/" + id);
            QCOMPARE(gone.status, 404);
            QCOMPARE(gone.errorType(), QStringLiteral("invalid_request_error"));
            QVERIFY2(gone.errorMessage().contains(id), qPrintable(gone.errorMessage()));
        }
        const HttpResult cannotContinue = post("/v1/responses", {{"input", "more"}, {"previous_response_id", id}});
        QCOMPARE(cannotContinue.status, 400);
        QCOMPARE(cannotContinue.errorParam(), QStringLiteral("previous_response_id"));

        // Not kept with store: false; a stored response takes no POST.
        const HttpResult unkept = post("/v1/responses", {{"input", "x"}, {"store", false}, {"max_output_tokens", 2}});
        QCOMPARE(m_api->client->get("/v1/responses/" + unkept.json().value("id").toString()).status, 404);
        const HttpResult wrongVerb = post("/v1/responses/" + last.value("id").toString(), {{"input", "x"}});
        QCOMPARE(wrongVerb.status, 405);
        QVERIFY2(wrongVerb.header("allow").startsWith("GET, DELETE"), wrongVerb.header("allow").constData());
        // Reasoning is counted, and this model (no template, no reasoning) spent none.
        QCOMPARE(whole.json().value("usage").toObject().value("output_tokens_details").toObject()
                     .value("reasoning_tokens").toInt(-1), 0);
    }

    void responsesForcedFunctionCallAndItsOutput()
    {
        const QJsonObject body{{"input", "Weather in Oslo?"}, {"tools", kFunctionTools},
                               {"tool_choice", QJsonObject{{"type", "function"}, {"name", "get_weather"}}},
                               {"max_output_tokens", 120}, {"temperature", 1}};
        const HttpResult r = post("/v1/responses", body);
        QCOMPARE(r.status, 200);
        QJsonObject call;
        for (const QJsonValue &item : r.json().value("output").toArray())
            if (item.toObject().value("type").toString() == QLatin1String("function_call"))
                call = item.toObject();
        QCOMPARE(call.value("name").toString(), QStringLiteral("get_weather"));
        QVERIFY(call.value("call_id").toString().startsWith("call_"));
        const QJsonObject args = QJsonDocument::fromJson(call.value("arguments").toString().toUtf8()).object();
        QVERIFY2(args.value("city").isString(), qPrintable(call.value("arguments").toString()));
        QVERIFY(QStringList({"c", "f"}).contains(args.value("unit").toString()));

        // Streamed, the call is its own item with its arguments' events.
        const Events ev = readEvents(post("/v1/responses", with(body, "stream", true)).body);
        QVERIFY(ev.names().contains("response.function_call_arguments.done"));
        QCOMPARE(ev.last("response.function_call_arguments.done").value("name").toString(), QStringLiteral("get_weather"));

        // The tool's output goes back with the conversation kept on the server.
        const HttpResult next = post("/v1/responses", {{"previous_response_id", r.json().value("id")},
                                                       {"input", QJsonArray{QJsonObject{{"type", "function_call_output"},
                                                                                        {"call_id", call.value("call_id")},
                                                                                        {"output", "sunny, 20 C"}}}},
                                                       {"tools", kFunctionTools}, {"max_output_tokens", 8}});
        QCOMPARE(next.status, 200);
        QCOMPARE(next.json().value("status").toString().isEmpty(), false);
    }

    void responsesJsonSchema()
    {
        const QJsonObject schema = QJsonDocument::fromJson(R"({"type":"object","properties":{
            "name":{"type":"string","maxLength":10},"mood":{"enum":["happy","sad"]}},
            "required":["name","mood"],"additionalProperties":false})").object();
        const HttpResult r = post("/v1/responses", {{"input", "Describe someone."}, {"max_output_tokens", 80},
                                                    {"temperature", 1},
                                                    {"text", QJsonObject{{"format", QJsonObject{{"type", "json_schema"},
                                                                                                {"name", "person"},
                                                                                                {"schema", schema}}}}}});
        QCOMPARE(r.status, 200);
        const QJsonObject v = QJsonDocument::fromJson(outputText(r.json()).toUtf8()).object();
        QVERIFY2(v.value("name").isString() && QStringList({"happy", "sad"}).contains(v.value("mood").toString()),
                 qPrintable(outputText(r.json())));
    }

    void messageWholeAndStreamedAgree()
    {
        const QJsonObject body{{"model", "r3"}, {"system", "You are terse."}, {"max_tokens", 24}, {"temperature", 0},
                               {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Tell me a story."}}}}};
        const HttpResult whole = post("/v1/messages", body, {{"anthropic-version", "2023-06-01"}});
        QCOMPARE(whole.status, 200);
        const QJsonObject m = whole.json();
        QVERIFY(m.value("id").toString().startsWith("msg_"));
        QCOMPARE(m.value("type").toString(), QStringLiteral("message"));
        QCOMPARE(m.value("role").toString(), QStringLiteral("assistant"));
        QVERIFY(QStringList({"end_turn", "max_tokens"}).contains(m.value("stop_reason").toString()));
        QVERIFY(m.value("usage").toObject().value("output_tokens").toInt() <= 24);

        const HttpResult streamed = post("/v1/messages", with(body, "stream", true));
        QCOMPARE(streamed.status, 200);
        const Events ev = readEvents(streamed.body);
        QVERIFY(ev.framed);
        QCOMPARE(ev.list.first().first, QStringLiteral("message_start"));
        QCOMPARE(ev.list.last().first, QStringLiteral("message_stop"));
        QString text;
        for (const auto &e : ev.list)
            if (e.first == QLatin1String("content_block_delta"))
                text += e.second.value("delta").toObject().value("text").toString();
        QCOMPARE(text, messageText(m));
        const QJsonObject delta = ev.last("message_delta");
        QCOMPARE(delta.value("delta").toObject().value("stop_reason"), m.value("stop_reason"));
        QCOMPARE(delta.value("usage").toObject().value("output_tokens"), m.value("usage").toObject().value("output_tokens"));
        QCOMPARE(ev.last("message_start").value("message").toObject().value("usage").toObject().value("input_tokens"),
                 m.value("usage").toObject().value("input_tokens"));
    }

    void messageStopReasons()
    {
        // Find a piece of the greedy answer (letters, first seen past its start), then ask the
        // same request to stop there. The random model's answers are gibberish with repeats.
        const QJsonObject body{{"max_tokens", 40}, {"temperature", 0},
                               {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Tell me a story."}}}}};
        const QJsonObject free = post("/v1/messages", body).json();
        const QString text = messageText(free);
        QString stop;
        const auto letters = [](const QString &piece) {
            return std::all_of(piece.begin(), piece.end(), [](QChar c) { return c.isLetterOrNumber(); });
        };
        for (qsizetype at = 2; at + 3 <= text.size() && stop.isEmpty(); ++at)
            if (text.indexOf(text.mid(at, 3)) == at && letters(text.mid(at, 3)))
                stop = text.mid(at, 3);
        if (stop.isEmpty())
            QSKIP("the random model's greedy answer has no piece to stop at");
        const QJsonObject cut = post("/v1/messages", with(body, "stop_sequences", QJsonArray{stop})).json();
        QCOMPARE(cut.value("stop_reason").toString(), QStringLiteral("stop_sequence"));
        QCOMPARE(cut.value("stop_sequence").toString(), stop);
        QVERIFY(!messageText(cut).contains(stop));
        QVERIFY(text.startsWith(messageText(cut)));

        const QJsonObject shortOne = post("/v1/messages", with(body, "max_tokens", 2)).json();
        QCOMPARE(shortOne.value("stop_reason").toString(), QStringLiteral("max_tokens"));
        QCOMPARE(shortOne.value("usage").toObject().value("output_tokens").toInt(), 2);
    }

    void messagesForcedToolUseAndItsResult()
    {
        QJsonObject body{{"max_tokens", 120}, {"temperature", 1}, {"tools", kAnthropicTools},
                         {"tool_choice", QJsonObject{{"type", "tool"}, {"name", "get_weather"}}},
                         {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Weather in Oslo?"}}}}};
        const QJsonObject m = post("/v1/messages", body).json();
        QCOMPARE(m.value("stop_reason").toString(), QStringLiteral("tool_use"));
        QJsonObject use;
        for (const QJsonValue &b : m.value("content").toArray())
            if (b.toObject().value("type").toString() == QLatin1String("tool_use"))
                use = b.toObject();
        QCOMPARE(use.value("name").toString(), QStringLiteral("get_weather"));
        QVERIFY(use.value("id").toString().startsWith("toolu_"));
        QVERIFY(use.value("input").toObject().value("city").isString());

        const Events ev = readEvents(post("/v1/messages", with(body, "stream", true)).body);
        QString json;
        for (const auto &e : ev.list)
            json += e.second.value("delta").toObject().value("partial_json").toString();
        QVERIFY2(QJsonDocument::fromJson(json.toUtf8()).object().value("city").isString(), qPrintable(json));
        QCOMPARE(ev.last("message_delta").value("delta").toObject().value("stop_reason").toString(), QStringLiteral("tool_use"));

        // The result goes back as a tool_result block.
        QJsonArray messages = body.value("messages").toArray();
        messages.append(QJsonObject{{"role", "assistant"}, {"content", m.value("content")}});
        messages.append(QJsonObject{{"role", "user"}, {"content", QJsonArray{QJsonObject{
                                                           {"type", "tool_result"}, {"tool_use_id", use.value("id")},
                                                           {"content", "sunny"}}}}});
        body["messages"] = messages;
        body.remove("tool_choice");
        body["max_tokens"] = 8;
        const HttpResult after = post("/v1/messages", body);
        QCOMPARE(after.status, 200);
        QCOMPARE(after.json().value("type").toString(), QStringLiteral("message"));
    }

    void countTokensMatchesTheMessagePrompt()
    {
        const QJsonObject body{{"system", "You are terse."},
                               {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Count me."}}}}};
        const HttpResult count = post("/v1/messages/count_tokens", body);
        QCOMPARE(count.status, 200);
        const int tokens = count.json().value("input_tokens").toInt();
        QVERIFY(tokens > 3);
        const QJsonObject m = post("/v1/messages", with(body, "max_tokens", 1)).json();
        QCOMPARE(m.value("usage").toObject().value("input_tokens").toInt()
                     + m.value("usage").toObject().value("cache_read_input_tokens").toInt(),
                 tokens);
        const HttpResult bad = post("/v1/messages/count_tokens", {{"messages", "nope"}});
        QCOMPARE(bad.status, 400);
        QCOMPARE(bad.json().value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
    }

    void keysAndErrorShapes()
    {
        m_api->server.setApiKey("sk-test");
        const QJsonObject body{{"max_tokens", 2}, {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi"}}}}};
        HttpResult r = post("/v1/messages", body);
        QCOMPARE(r.status, 401);
        QCOMPARE(r.json().value("error").toObject().value("type").toString(), QStringLiteral("authentication_error"));
        QCOMPARE(post("/v1/messages", body, {{"x-api-key", "sk-wrong"}}).status, 401);
        QCOMPARE(post("/v1/messages", body, {{"x-api-key", "sk-test"}, {"anthropic-version", "2023-06-01"}}).status, 200);
        QCOMPARE(post("/v1/messages", body, {{"authorization", "Bearer sk-test"}}).status, 200);
        QCOMPARE(post("/v1/responses", {{"input", "hi"}, {"max_output_tokens", 2}}, {{"x-api-key", "sk-test"}}).status, 200);
        r = post("/v1/responses", {{"input", "hi"}});
        QCOMPARE(r.status, 401);
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("invalid_api_key"));
        m_api->server.setApiKey(QString());

        r = m_api->client->call("POST", "/v1/messages", "{not json");
        QCOMPARE(r.status, 400);
        QCOMPARE(r.json().value("type").toString(), QStringLiteral("error"));
        QCOMPARE(r.json().value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
        r = m_api->client->get("/v1/messages");
        QCOMPARE(r.status, 405);
        QCOMPARE(r.json().value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
        // A prompt longer than the context: the client's fault, named in each API's terms.
        const QString tooLong = QString("many words ").repeated(1500);
        r = post("/v1/responses", {{"input", tooLong}, {"max_output_tokens", 4}});
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorParam(), QStringLiteral("input"));
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("context_length_exceeded"));
        // Streamed, the engine refuses the prompt before anything is generated: the same 400
        // as without a stream, before the stream begins (as OpenAI answers it).
        r = post("/v1/responses", {{"input", tooLong}, {"stream", true}});
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorParam(), QStringLiteral("input"));
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("context_length_exceeded"));
        r = post("/v1/messages", {{"max_tokens", 4}, {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", tooLong}}}}});
        QCOMPARE(r.status, 400);
        QCOMPARE(r.json().value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
        QVERIFY(!r.json().value("error").toObject().value("message").toString().isEmpty());

        r = post("/v1/responses", {{"input", 3}});
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorParam(), QStringLiteral("input"));
        QCOMPARE(r.errorType(), QStringLiteral("invalid_request_error"));
    }
};

QTEST_MAIN(TestApiServerAgents)
#include "tst_apiserver_agents.moc"
