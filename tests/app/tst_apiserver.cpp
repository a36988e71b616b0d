// The API server without a model, driven by a real HTTP client (QNetworkAccessManager):
// routing, validation (400), auth (401), unknown routes (404/405), body limit (413), no
// model (503), CORS, binding rules and readable listen errors, the request log, and the
// server staying up after every error.
#include "apiservertestbed.h"
#include "server/apierror.h"
#include "engine/enginecontroller.h"
#include "server/apiserver.h"

#include <QAbstractItemModelTester>
#include <QHostAddress>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

namespace {
QJsonObject chatBody(const QJsonValue &content = QStringLiteral("hello"))
{
    return {{"model", "any"}, {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", content}}}}};
}

QJsonObject with(QJsonObject o, const QString &key, const QJsonValue &v)
{
    o.insert(key, v);
    return o;
}
} // namespace

class TestApiServer : public QObject {
    Q_OBJECT

    std::unique_ptr<ApiServerTestbed> m_api;

    void restart()
    {
        m_api->server.stop();
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
    }

private Q_SLOTS:
    void init()
    {
        m_api = std::make_unique<ApiServerTestbed>();
        QVERIFY(!m_api->server.running());
        QVERIFY2(m_api->listen(), qPrintable(m_api->server.errorString()));
        QVERIFY(m_api->server.running());
        QVERIFY(m_api->server.boundPort() > 0);
        QCOMPARE(m_api->server.url(), QStringLiteral("http://127.0.0.1:%1/v1").arg(m_api->server.boundPort()));
    }

    void cleanup()
    {
        m_api.reset();
    }

    void healthSays503WithoutModel()
    {
        const HttpResult r = m_api->client->get("/health");
        QCOMPARE(r.status, 503);
        QCOMPARE(r.json().value("status").toString(), QStringLiteral("no_model"));
        QVERIFY(r.header("content-type").startsWith("application/json"));
    }

    void modelsListIsEmptyWithoutModel()
    {
        const HttpResult r = m_api->client->get("/v1/models");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value("object").toString(), QStringLiteral("list"));
        QVERIFY(r.json().value("data").toArray().isEmpty());
        QCOMPARE(m_api->client->get("/v1/models/nothing").status, 404);
    }

    void completionsSay503WithoutModel()
    {
        HttpResult r = m_api->client->post("/v1/chat/completions", chatBody());
        QCOMPARE(r.status, 503);
        QVERIFY(r.errorMessage().contains("No model is loaded"));
        QCOMPARE(r.errorType(), QStringLiteral("server_error"));
        r = m_api->client->post("/v1/completions", {{"prompt", "Once"}});
        QCOMPARE(r.status, 503);
        r = m_api->client->post("/v1/chat/completions", with(chatBody(), "stream", true));
        QCOMPARE(r.status, 503);
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("model_not_ready"));
    }

    void unknownRoutesAre404()
    {
        for (const char *path : {"/", "/v1", "/v1/embeddings", "/v2/chat/completions", "/admin"}) {
            const HttpResult r = m_api->client->get(path);
            QCOMPARE(r.status, 404);
            const QJsonObject e = r.json().value("error").toObject();
            QVERIFY2(!e.value("message").toString().isEmpty(), path);
            QCOMPARE(e.value("type").toString(), QStringLiteral("invalid_request_error"));
            QCOMPARE(e.value("code").toString(), QStringLiteral("unknown_url"));
        }
        QCOMPARE(m_api->client->call("POST", "/v1/nothing", "{}").status, 404);
    }

    void wrongMethodIs405()
    {
        QCOMPARE(m_api->client->get("/v1/chat/completions").status, 405);
        QCOMPARE(m_api->client->call("POST", "/health", "{}").status, 405);
        QCOMPARE(m_api->client->call("DELETE", "/v1/models").status, 405);
    }

    void malformedJsonIs400()
    {
        for (const QByteArray body : {QByteArray("{"), QByteArray("nope"), QByteArray("[1,2]"), QByteArray(""),
                                      QByteArray("{\"messages\": [}")}) {
            for (const char *path : {"/v1/chat/completions", "/v1/completions"}) {
                const HttpResult r = m_api->client->call("POST", path, body);
                QCOMPARE(r.status, 400);
                QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("invalid_json"));
            }
        }
    }

    // One request per error the server can give before a model runs, each checked for the
    // status, OpenAI's error object (exactly message/type/param/code) and its type, code and
    // param, and the header its status calls for.
    void errorObjectsFollowOpenAI_data()
    {
        QTest::addColumn<QByteArray>("verb");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QByteArray>("header"); // "Name: value" the answer must carry, or empty
        QTest::addColumn<bool>("withKey");
        QTest::addColumn<int>("maxBody");
        const QString chat = QStringLiteral("/v1/chat/completions");
        const QString bad = QStringLiteral("invalid_request_error");
        auto body = [](const QJsonObject &o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); };
        const QJsonObject ok = chatBody();
        QTest::newRow("400 malformed JSON") << QByteArray("POST") << chat << QByteArray("{") << 400 << bad
                                            << "invalid_json" << QString() << QByteArray() << false << 0;
        QTest::newRow("400 missing field") << QByteArray("POST") << chat << body({{"model", "m"}}) << 400 << bad
                                           << "missing_required_parameter" << "messages" << QByteArray() << false << 0;
        QTest::newRow("400 empty array") << QByteArray("POST") << chat << body({{"messages", QJsonArray{}}}) << 400
                                         << bad << "empty_array" << "messages" << QByteArray() << false << 0;
        QTest::newRow("400 wrong type") << QByteArray("POST") << chat << body({{"messages", "hi"}}) << 400 << bad
                                        << "invalid_type" << "messages" << QByteArray() << false << 0;
        QTest::newRow("400 decimal above max") << QByteArray("POST") << chat << body(with(ok, "temperature", 2.5))
                                               << 400 << bad << "decimal_above_max_value" << "temperature"
                                               << QByteArray() << false << 0;
        QTest::newRow("400 decimal below min") << QByteArray("POST") << chat << body(with(ok, "top_p", -0.1)) << 400
                                               << bad << "decimal_below_min_value" << "top_p" << QByteArray() << false
                                               << 0;
        QTest::newRow("400 integer below min") << QByteArray("POST") << chat << body(with(ok, "max_tokens", 0)) << 400
                                               << bad << "integer_below_min_value" << "max_tokens" << QByteArray()
                                               << false << 0;
        QTest::newRow("400 integer expected") << QByteArray("POST") << chat << body(with(ok, "max_tokens", 1.5))
                                              << 400 << bad << "invalid_type" << "max_tokens" << QByteArray() << false
                                              << 0;
        QTest::newRow("400 invalid value") << QByteArray("POST") << chat
                                           << body(with(ok, "response_format", QJsonObject{{"type", "xml"}})) << 400
                                           << bad << "invalid_value" << "response_format.type" << QByteArray() << false
                                           << 0;
        QTest::newRow("401 no key") << QByteArray("GET") << QStringLiteral("/v1/models") << QByteArray() << 401 << bad
                                    << "invalid_api_key" << QString() << QByteArray("WWW-Authenticate: Bearer") << true
                                    << 0;
        QTest::newRow("401 no key on POST") << QByteArray("POST") << chat << body(ok) << 401 << bad
                                            << "invalid_api_key" << QString() << QByteArray("WWW-Authenticate: Bearer")
                                            << true << 0;
        QTest::newRow("404 unknown route") << QByteArray("GET") << QStringLiteral("/v1/embeddings") << QByteArray()
                                           << 404 << bad << "unknown_url" << QString() << QByteArray() << false << 0;
        QTest::newRow("404 unknown model") << QByteArray("GET") << QStringLiteral("/v1/models/gpt-4o") << QByteArray()
                                           << 404 << bad << "model_not_found" << "model" << QByteArray() << false << 0;
        QTest::newRow("405 wrong method") << QByteArray("GET") << chat << QByteArray() << 405 << bad
                                          << "method_not_allowed" << QString() << QByteArray("Allow: POST, OPTIONS")
                                          << false << 0;
        QTest::newRow("405 POST on models") << QByteArray("POST") << QStringLiteral("/v1/models") << QByteArray("{}")
                                            << 405 << bad << "method_not_allowed" << QString()
                                            << QByteArray("Allow: GET, OPTIONS") << false << 0;
        QTest::newRow("413 body too large") << QByteArray("POST") << chat << body(chatBody(QString(4096, 'x'))) << 413
                                            << bad << "request_too_large" << QString() << QByteArray() << false << 1024;
        QTest::newRow("503 no model") << QByteArray("POST") << chat << body(ok) << 503 << QStringLiteral("server_error")
                                      << "model_not_ready" << QString() << QByteArray() << false << 0;
        QTest::newRow("503 no model, completions") << QByteArray("POST") << QStringLiteral("/v1/completions")
                                                   << body({{"prompt", "Once"}}) << 503 << QStringLiteral("server_error")
                                                   << "model_not_ready" << QString() << QByteArray() << false << 0;
    }

    void errorObjectsFollowOpenAI()
    {
        QFETCH(QByteArray, verb);
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QString, type);
        QFETCH(QString, code);
        QFETCH(QString, param);
        QFETCH(QByteArray, header);
        QFETCH(bool, withKey);
        QFETCH(int, maxBody);
        if (withKey)
            m_api->server.setApiKey("sk-errors");
        if (maxBody > 0)
            m_api->server.setMaxBodyBytes(maxBody);
        const HttpResult r = m_api->client->call(verb, path, body);
        QCOMPARE(r.status, status);
        QVERIFY(r.header("content-type").startsWith("application/json"));
        const QJsonObject root = r.json();
        QCOMPARE(root.keys(), QStringList{"error"});
        const QJsonObject e = root.value("error").toObject();
        QCOMPARE(e.keys(), (QStringList{"code", "message", "param", "type"}));
        QVERIFY(e.value("message").toString().size() > 10);
        QCOMPARE(e.value("type").toString(), type);
        QCOMPARE(e.value("code").toString(), code);
        if (param.isEmpty())
            QVERIFY(e.value("param").isNull());
        else
            QCOMPARE(e.value("param").toString(), param);
        if (!header.isEmpty()) {
            const QList<QByteArray> nv = header.split(':');
            QCOMPARE(r.header(nv[0].toLower()), nv[1].trimmed());
        }
        // The server is still there.
        QCOMPARE(m_api->client->get("/health").status, 503);
    }

    void invalidFieldsAre400_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QJsonObject>("body");
        QTest::addColumn<QString>("param");
        const QString chat = QStringLiteral("/v1/chat/completions");
        const QString text = QStringLiteral("/v1/completions");
        const QJsonObject ok = chatBody();
        QTest::newRow("no messages") << chat << QJsonObject{{"model", "m"}} << "messages";
        QTest::newRow("messages not array") << chat << QJsonObject{{"messages", "hi"}} << "messages";
        QTest::newRow("empty messages") << chat << QJsonObject{{"messages", QJsonArray{}}} << "messages";
        QTest::newRow("message not object") << chat << QJsonObject{{"messages", QJsonArray{3}}} << "messages[0]";
        QTest::newRow("bad role") << chat
                                  << QJsonObject{{"messages", QJsonArray{QJsonObject{{"role", "wizard"}, {"content", "x"}}}}}
                                  << "messages[0].role";
        QTest::newRow("no content") << chat << QJsonObject{{"messages", QJsonArray{QJsonObject{{"role", "user"}}}}}
                                    << "messages[0].content";
        QTest::newRow("content number") << chat << chatBody(5) << "messages[0].content";
        QTest::newRow("bad part type") << chat << chatBody(QJsonArray{QJsonObject{{"type", "audio"}}})
                                       << "messages[0].content[0].type";
        QTest::newRow("remote image") << chat
                                      << chatBody(QJsonArray{QJsonObject{
                                             {"type", "image_url"},
                                             {"image_url", QJsonObject{{"url", "http://example.com/a.png"}}}}})
                                      << "messages[0].content[0].image_url.url";
        QTest::newRow("local image not allowed")
            << chat
            << chatBody(QJsonArray{QJsonObject{{"type", "image_url"}, {"image_url", QJsonObject{{"url", "/etc/hostname"}}}}})
            << "messages[0].content[0].image_url.url";
        QTest::newRow("bad base64") << chat
                                    << chatBody(QJsonArray{QJsonObject{
                                           {"type", "image_url"},
                                           {"image_url", QJsonObject{{"url", "data:image/png;base64,@@@"}}}}})
                                    << "messages[0].content[0].image_url.url";
        QTest::newRow("model not string") << chat << with(ok, "model", 7) << "model";
        QTest::newRow("stream not bool") << chat << with(ok, "stream", "yes") << "stream";
        QTest::newRow("stream_options not object") << chat << with(ok, "stream_options", 1) << "stream_options";
        QTest::newRow("temperature high") << chat << with(ok, "temperature", 2.5) << "temperature";
        QTest::newRow("temperature string") << chat << with(ok, "temperature", "hot") << "temperature";
        QTest::newRow("top_p negative") << chat << with(ok, "top_p", -0.1) << "top_p";
        QTest::newRow("max_tokens zero") << chat << with(ok, "max_tokens", 0) << "max_tokens";
        QTest::newRow("max_tokens fraction") << chat << with(ok, "max_tokens", 1.5) << "max_tokens";
        QTest::newRow("max_completion_tokens negative") << chat << with(ok, "max_completion_tokens", -3)
                                                        << "max_completion_tokens";
        QTest::newRow("seed string") << chat << with(ok, "seed", "42") << "seed";
        QTest::newRow("n two") << chat << with(ok, "n", 2) << "n";
        QTest::newRow("stop number") << chat << with(ok, "stop", 5) << "stop";
        QTest::newRow("stop array of numbers") << chat << with(ok, "stop", QJsonArray{1, 2}) << "stop";
        QTest::newRow("stop empty string") << chat << with(ok, "stop", "") << "stop";
        QTest::newRow("tools not array") << chat << with(ok, "tools", QJsonObject{}) << "tools";
        QTest::newRow("tool bad type") << chat << with(ok, "tools", QJsonArray{QJsonObject{{"type", "code"}}})
                                       << "tools[0].type";
        QTest::newRow("tool no name")
            << chat << with(ok, "tools", QJsonArray{QJsonObject{{"type", "function"}, {"function", QJsonObject{}}}})
            << "tools[0].function.name";
        QTest::newRow("tool_choice required without tools") << chat << with(ok, "tool_choice", "required")
                                                             << "tool_choice";
        QTest::newRow("tool_choice unknown") << chat << with(ok, "tool_choice", "sometimes") << "tool_choice";
        const QJsonArray tools{QJsonObject{{"type", "function"},
                                           {"function", QJsonObject{{"name", "get_weather"},
                                                                    {"parameters", QJsonObject{{"type", "object"}}}}}}};
        QTest::newRow("tool_choice names a missing tool")
            << chat
            << with(with(ok, "tools", tools), "tool_choice",
                    QJsonObject{{"type", "function"}, {"function", QJsonObject{{"name", "get_time"}}}})
            << "tool_choice.function.name";
        QTest::newRow("response_format type") << chat << with(ok, "response_format", QJsonObject{{"type", "xml"}})
                                              << "response_format.type";
        QTest::newRow("json_schema without name")
            << chat
            << with(ok, "response_format",
                    QJsonObject{{"type", "json_schema"}, {"json_schema", QJsonObject{{"schema", QJsonObject{}}}}})
            << "response_format.json_schema.name";
        QTest::newRow("json_schema schema not object")
            << chat
            << with(ok, "response_format",
                    QJsonObject{{"type", "json_schema"},
                                {"json_schema", QJsonObject{{"name", "x"}, {"schema", "object"}}}})
            << "response_format.json_schema.schema";
        QTest::newRow("prompt missing") << text << QJsonObject{{"model", "m"}} << "prompt";
        QTest::newRow("prompt number") << text << QJsonObject{{"prompt", 3}} << "prompt";
        QTest::newRow("prompt batch") << text << QJsonObject{{"prompt", QJsonArray{"a", "b"}}} << "prompt";
        QTest::newRow("completion temperature") << text << QJsonObject{{"prompt", "a"}, {"temperature", -1}}
                                                << "temperature";
    }

    void invalidFieldsAre400()
    {
        QFETCH(QString, path);
        QFETCH(QJsonObject, body);
        QFETCH(QString, param);
        const HttpResult r = m_api->client->post(path, body);
        QCOMPARE(r.status, 400);
        QCOMPARE(r.errorType(), QStringLiteral("invalid_request_error"));
        QCOMPARE(r.errorParam(), param);
        QVERIFY(!r.errorMessage().isEmpty());
    }

    void validRequestsPassValidation()
    {
        // Every accepted field, in its accepted forms: the only complaint left is "no model".
        const QJsonArray tools{QJsonObject{{"type", "function"},
                                           {"function", QJsonObject{{"name", "get_weather"},
                                                                    {"description", "Weather for a city"},
                                                                    {"parameters", QJsonObject{{"type", "object"}}}}}}};
        QJsonObject full = chatBody(QJsonArray{QJsonObject{{"type", "text"}, {"text", "hi"}}});
        QJsonArray msgs = full.value("messages").toArray();
        msgs.prepend(QJsonObject{{"role", "system"}, {"content", "Be brief."}});
        msgs.append(QJsonObject{{"role", "assistant"},
                                {"content", QJsonValue::Null},
                                {"tool_calls", QJsonArray{QJsonObject{
                                                   {"id", "call_1"},
                                                   {"type", "function"},
                                                   {"function", QJsonObject{{"name", "get_weather"},
                                                                            {"arguments", "{\"city\":\"Oslo\"}"}}}}}}});
        msgs.append(QJsonObject{{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}});
        full["messages"] = msgs;
        full["tools"] = tools;
        full["tool_choice"] = QJsonObject{{"type", "function"}, {"function", QJsonObject{{"name", "get_weather"}}}};
        full["temperature"] = 0.7;
        full["top_p"] = 0.9;
        full["seed"] = 42;
        full["max_completion_tokens"] = 16;
        full["stop"] = QJsonArray{"\n\n", "END"};
        full["stream"] = true;
        full["stream_options"] = QJsonObject{{"include_usage", true}};
        full["frequency_penalty"] = 0.5; // ignored, as other OpenAI-compatible servers do
        full["user"] = "someone";
        QCOMPARE(m_api->client->post("/v1/chat/completions", full).status, 503);
        QCOMPARE(m_api->client->post("/v1/completions", {{"prompt", QJsonArray{"Once"}}, {"stop", "."}}).status, 503);
    }

    void bodyOverLimitIs413()
    {
        m_api->server.setMaxBodyBytes(1024);
        const QJsonObject big = chatBody(QString(4096, QLatin1Char('x')));
        const HttpResult r = m_api->client->post("/v1/chat/completions", big);
        QCOMPARE(r.status, 413);
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("request_too_large"));
        QCOMPARE(m_api->client->post("/v1/chat/completions", chatBody()).status, 503); // small bodies still pass
    }

    // Qt keeps a request's body until the next request on its connection: a large one's
    // connection is closed after the answer so an idle keep-alive client cannot hold it.
    void largeBodyClosesItsConnection()
    {
        // The server runs on this thread: the socket is read through the event loop (QTRY_*).
        auto exchange = [&](QTcpSocket &raw, const QByteArray &body) {
            raw.connectToHost(QHostAddress::LocalHost, quint16(m_api->server.boundPort()));
            raw.write("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
        };
        const QByteArray large(ApiServer::kLargeBodyBytes, 'a'); // not JSON: 400 once read
        QTcpSocket closed;
        QByteArray answer;
        connect(&closed, &QTcpSocket::readyRead, this, [&] { answer += closed.readAll(); });
        exchange(closed, large);
        QTRY_VERIFY_WITH_TIMEOUT(closed.state() == QAbstractSocket::UnconnectedState, 5000);
        QVERIFY2(answer.startsWith("HTTP/1.1 400"), answer.left(200).constData());
        QVERIFY(answer.toLower().contains("\r\nconnection: close\r\n"));

        QTcpSocket kept;
        QByteArray second;
        connect(&kept, &QTcpSocket::readyRead, this, [&] { second += kept.readAll(); });
        exchange(kept, large.left(large.size() - 1));
        QTRY_VERIFY_WITH_TIMEOUT(second.contains("}"), 5000);
        QTest::qWait(300);
        QCOMPARE(kept.state(), QAbstractSocket::ConnectedState); // a smaller body keeps its connection
        QVERIFY2(second.startsWith("HTTP/1.1 400"), second.left(200).constData());
        QVERIFY(!second.toLower().contains("connection: close"));
    }

    void apiKeyIsRequiredWhenSet()
    {
        m_api->server.setApiKey("sk-test-123");
        HttpResult r = m_api->client->get("/v1/models");
        QCOMPARE(r.status, 401);
        QCOMPARE(r.json().value("error").toObject().value("code").toString(), QStringLiteral("invalid_api_key"));
        QCOMPARE(m_api->client->get("/v1/models", {{"Authorization", "Bearer sk-test-12"}}).status, 401);
        QCOMPARE(m_api->client->get("/v1/models", {{"Authorization", "Bearer sk-test-1234"}}).status, 401);
        QCOMPARE(m_api->client->get("/v1/models", {{"Authorization", "sk-test-123"}}).status, 401);
        QCOMPARE(m_api->client->post("/v1/chat/completions", chatBody()).status, 401);
        QCOMPARE(m_api->client->get("/v1/models", {{"Authorization", "Bearer sk-test-123"}}).status, 200);
        QCOMPARE(m_api->client->post("/v1/chat/completions", chatBody(), {{"Authorization", "Bearer sk-test-123"}}).status, 503);
        // Health never needs the key (load balancers, the GUI's own probe).
        QCOMPARE(m_api->client->get("/health").status, 503);
    }

    void corsIsOffByDefault()
    {
        const HttpResult r = m_api->client->get("/v1/models", {{"Origin", "http://evil.example"}});
        QCOMPARE(r.status, 200);
        QVERIFY(!r.hasHeader("access-control-allow-origin"));
        const HttpResult pre = m_api->client->call("OPTIONS", "/v1/chat/completions", {},
                                              {{"Origin", "http://evil.example"},
                                               {"Access-Control-Request-Method", "POST"}});
        QVERIFY(!pre.hasHeader("access-control-allow-origin"));
    }

    void corsAllowListIsHonoured()
    {
        m_api->server.setCorsOrigins({"http://localhost:3000/", "https://app.example"});
        HttpResult r = m_api->client->get("/v1/models", {{"Origin", "http://localhost:3000"}});
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("http://localhost:3000"));
        r = m_api->client->get("/v1/models", {{"Origin", "http://other.example"}});
        QVERIFY(!r.hasHeader("access-control-allow-origin"));
        // Errors carry the header too, so the browser page can read them.
        r = m_api->client->post("/v1/chat/completions", {{"messages", 1}}, {{"Origin", "https://app.example"}});
        QCOMPARE(r.status, 400);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://app.example"));
        // Preflight.
        r = m_api->client->call("OPTIONS", "/v1/chat/completions", {},
                           {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"},
                            {"Access-Control-Request-Headers", "authorization, content-type"}});
        QCOMPARE(r.status, 204);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://app.example"));
        QVERIFY(r.header("access-control-allow-headers").contains("Authorization"));
        QVERIFY(r.header("access-control-allow-methods").contains("POST"));
        m_api->server.setCorsOrigins({"*"});
        r = m_api->client->get("/health", {{"Origin", "http://anything.example"}});
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("http://anything.example"));
    }

    void serverStaysUpAfterErrors()
    {
        // A burst of bad requests, some abandoned mid-way, then a good one.
        QList<QNetworkReply *> replies;
        for (int i = 0; i < 20; ++i)
            replies << m_api->client->start("POST", "/v1/chat/completions", QByteArray("{\"messages\":").repeated(i + 1));
        for (int i = 0; i < 20; i += 3)
            replies[i]->abort();
        for (QNetworkReply *r : replies)
            HttpTestClient::wait(r);
        QTcpSocket raw;
        raw.connectToHost(QHostAddress::LocalHost, quint16(m_api->server.boundPort()));
        QVERIFY(raw.waitForConnected(5000));
        raw.write("GARBAGE / NOTHTTP\r\n\r\n\x01\x02\x03");
        raw.waitForBytesWritten(1000);
        raw.abort();
        QCOMPARE(m_api->client->get("/health").status, 503);
        QCOMPARE(m_api->client->get("/v1/models").status, 200);
    }

    void portInUseIsReadable()
    {
        QTcpServer other;
        QVERIFY(other.listen(QHostAddress::LocalHost, 0));
        ApiServer second(&m_api->engine, nullptr);
        second.setPort(other.serverPort());
        QSignalSpy errors(&second, &ApiServer::errorStringChanged);
        QVERIFY(!second.start());
        QVERIFY(!second.running());
        QCOMPARE(errors.count(), 1);
        QCOMPARE(second.errorString(), QStringLiteral("Port %1 is in use by another program. Choose another port, "
                                                      "or close that program.").arg(other.serverPort()));
        other.close();
        QVERIFY(second.start());
        QVERIFY(second.errorString().isEmpty());
    }

    void otherAddressesNeedAnApiKey()
    {
        ApiServer open(&m_api->engine, nullptr);
        open.setPort(0);
        open.setHost("0.0.0.0");
        QVERIFY(!open.hostIsLoopback());
        QVERIFY(!open.start());
        QVERIFY(open.errorString().contains("set an API key first"));
        open.setApiKey(open.generateApiKey());
        QVERIFY(open.apiKey().startsWith("sk-waste-"));
        QCOMPARE(open.apiKey().size(), 9 + 40);
        QVERIFY(open.apiKey() != open.generateApiKey());
        QVERIFY2(open.start(), qPrintable(open.errorString()));
        open.stop();
        open.setHost("not-an-address");
        QVERIFY(!open.start());
        QVERIFY(open.errorString().contains("is not an IP address"));
        open.setHost("localhost");
        open.setApiKey({});
        QVERIFY(open.hostIsLoopback());
        QVERIFY(open.start());
    }

    void stopClosesTheSocket()
    {
        const quint16 port = quint16(m_api->server.boundPort());
        QSignalSpy running(&m_api->server, &ApiServer::runningChanged);
        m_api->server.stop();
        QCOMPARE(running.count(), 1);
        QVERIFY(!m_api->server.running());
        QVERIFY(m_api->server.url().isEmpty());
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(!probe.waitForConnected(2000));
        QCOMPARE(probe.error(), QAbstractSocket::ConnectionRefusedError);
        m_api->server.setRunning(true);
        QVERIFY(m_api->server.running());
    }

    void requestLogRecordsEveryRequest()
    {
        RequestLogModel *log = m_api->server.log();
        QAbstractItemModelTester tester(log, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int before = log->rowCount();
        m_api->client->get("/health");
        m_api->client->get("/nope");
        m_api->client->post("/v1/chat/completions", QJsonObject{{"messages", 1}});
        QCOMPARE(log->rowCount(), before + 3);
        const auto row = [&](int r, int role) { return log->data(log->index(before + r), role); };
        QCOMPARE(row(0, RequestLogModel::RouteRole).toString(), QStringLiteral("GET /health"));
        QCOMPARE(row(0, RequestLogModel::StatusRole).toInt(), 503);
        QCOMPARE(row(0, RequestLogModel::ClientRole).toString(), QStringLiteral("127.0.0.1"));
        QCOMPARE(row(1, RequestLogModel::StatusRole).toInt(), 404);
        QCOMPARE(row(2, RequestLogModel::RouteRole).toString(), QStringLiteral("POST /v1/chat/completions"));
        QCOMPARE(row(2, RequestLogModel::StatusRole).toInt(), 400);
        QVERIFY(row(2, RequestLogModel::DurationRole).toLongLong() >= 0);
        QVERIFY(row(2, RequestLogModel::TimeRole).toDateTime().isValid());
        QVERIFY(log->roleNames().values().contains("durationMs"));
    }

    void requestLogIsBounded()
    {
        RequestLogModel log(nullptr, 3);
        QAbstractItemModelTester tester(&log, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<quint64> keys;
        for (int i = 0; i < 5; ++i)
            keys << log.begin("c", QStringLiteral("GET /%1").arg(i));
        QCOMPARE(log.rowCount(), 3);
        QCOMPARE(log.data(log.index(0), RequestLogModel::RouteRole).toString(), QStringLiteral("GET /2"));
        log.finish(keys[0], 200, 1, 1); // dropped row: ignored
        log.finish(keys[4], 201, 7, 9);
        QCOMPARE(log.data(log.index(2), RequestLogModel::StatusRole).toInt(), 201);
        QCOMPARE(log.data(log.index(2), RequestLogModel::TokensRole).toInt(), 7);
        QCOMPARE(log.data(log.index(2), RequestLogModel::FinishedRole).toBool(), true);
        QCOMPARE(log.data(log.index(1), RequestLogModel::FinishedRole).toBool(), false);
        log.clear();
        QCOMPARE(log.rowCount(), 0);
    }

    // A failed generation's HTTP answer follows its error code and when it failed, never
    // the words of its message.
    void generationErrorsMapByCode()
    {
        const QString words = QStringLiteral("does not fit the context; max_tokens");
        const ApiError full = ApiError::fromGeneration({waste::ErrorCode::ContextFull, {}, QStringLiteral("x")}, true,
                                                       QStringLiteral("messages"));
        QCOMPARE(full.status, 400);
        QCOMPARE(full.type, QStringLiteral("invalid_request_error"));
        QCOMPARE(full.code, QStringLiteral("context_length_exceeded"));
        QCOMPARE(full.param, QStringLiteral("messages"));
        const ApiError few = ApiError::fromGeneration(
            {waste::ErrorCode::Argument, QStringLiteral("max_tokens"), QStringLiteral("too small")}, false,
            QStringLiteral("prompt"));
        QCOMPARE(few.status, 400);
        QCOMPARE(few.param, QStringLiteral("max_tokens"));
        QCOMPARE(few.code, QStringLiteral("invalid_value"));
        const ApiError refused = ApiError::fromGeneration({waste::ErrorCode::Argument, {}, words}, false,
                                                          QStringLiteral("prompt"));
        QCOMPARE(refused.status, 400);
        QCOMPARE(refused.param, QString());
        QCOMPARE(refused.code, QStringLiteral("invalid_value"));
        const ApiError midway = ApiError::fromGeneration({waste::ErrorCode::Io, {}, words}, true, QStringLiteral("prompt"));
        QCOMPARE(midway.status, 500);
        QCOMPARE(midway.type, QStringLiteral("server_error"));
        QCOMPARE(midway.message, words);
        const ApiError appOwn = ApiError::fromGeneration({std::nullopt, {}, words}, true, QStringLiteral("prompt"));
        QCOMPARE(appOwn.status, 500);
    }
};

QTEST_GUILESS_MAIN(TestApiServer)
#include "tst_apiserver.moc"
