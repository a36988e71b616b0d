// McpClient against a real MCP server: @modelcontextprotocol/server-everything from npm,
// over stdio and over streamable HTTP. Run through mcp_everything.sh, which installs the
// server and names its entry script in WASTE_MCP_EVERYTHING.
#include "mcp/mcpclient.h"
#include "mcp/mcphttptransport.h"
#include "mcp/mcpstdiotransport.h"
#include "mcp/mcptool.h"
#include "mcp/mcptoolset.h"

#include <QJsonArray>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QtTest>

#include <csignal>

namespace {
QString serverScript()
{
    return qEnvironmentVariable("WASTE_MCP_EVERYTHING");
}

// Waits for a reply; a reply that never finishes fails the test rather than hanging it.
bool waitFor(McpReply *reply, int ms = 20000)
{
    if (reply->isFinished())
        return true;
    QSignalSpy spy(reply, &McpReply::finished);
    return spy.wait(ms);
}

QString describe(const McpReply *reply)
{
    return QStringLiteral("error %1: %2").arg(int(reply->error())).arg(reply->errorString());
}
} // namespace

class TstMcpEverything : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void listsTools();
    void callsEcho();
    void callsGetSum();
    void badArgumentsAreReported();
    void timeoutLeavesTheConnectionUsable();
    void serverKilledMidCall();
    void streamableHttp();

private:
    McpClient *connectStdio();

    McpClient *m_client = nullptr;
};

void TstMcpEverything::initTestCase()
{
    QVERIFY2(!serverScript().isEmpty(), "WASTE_MCP_EVERYTHING is not set: run this test through ctest (mcp_everything.sh)");
    QVERIFY2(QFileInfo::exists(serverScript()), qPrintable(serverScript()));
    QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("node")).isEmpty(), "node is not on PATH");
}

void TstMcpEverything::init()
{
    m_client = connectStdio();
    QVERIFY(m_client);
}

void TstMcpEverything::cleanup()
{
    delete m_client;
    m_client = nullptr;
}

McpClient *TstMcpEverything::connectStdio()
{
    auto *client = new McpClient(new McpStdioTransport(QStringLiteral("node"), {serverScript(), QStringLiteral("stdio")}));
    QSignalSpy ready(client, &McpClient::ready);
    QSignalSpy failed(client, &McpClient::failed);
    client->connectToServer();
    if (!ready.wait(30000)) {
        qWarning() << "handshake failed:" << (failed.isEmpty() ? QStringLiteral("no answer") : failed.at(0).at(0).toString());
        delete client;
        return nullptr;
    }
    return client;
}

void TstMcpEverything::listsTools()
{
    QCOMPARE(m_client->state(), McpClient::State::Ready);
    QVERIFY(!m_client->protocolVersion().isEmpty());
    QVERIFY(!m_client->serverInfo().value(QStringLiteral("name")).toString().isEmpty());
    McpReply *reply = m_client->listTools();
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->error() == McpReply::Error::None, qPrintable(describe(reply)));
    const QList<McpTool> tools = McpTool::listFromResult(reply->result());
    QVERIFY(tools.size() >= 3);
    const auto find = [&](const QString &name) -> const McpTool * {
        for (const McpTool &t : tools)
            if (t.name == name)
                return &t;
        return nullptr;
    };
    const McpTool *echo = find(QStringLiteral("echo"));
    QVERIFY(echo);
    QVERIFY(!echo->description.isEmpty());
    QCOMPARE(echo->inputSchema.value(QStringLiteral("type")).toString(), QStringLiteral("object"));
    QVERIFY(echo->inputSchema.value(QStringLiteral("properties")).toObject().contains(QStringLiteral("message")));
    QVERIFY(find(QStringLiteral("get-sum")));

    // The listed tools as the chat offers them to the model.
    McpToolSet set;
    set.setServerTools(QStringLiteral("everything"), tools);
    const QJsonArray offered = set.openAiTools();
    QCOMPARE(offered.size(), tools.size());
    const McpToolSet::Entry *sum = set.resolve(QStringLiteral("get-sum"));
    QVERIFY(sum);
    QCOMPARE(sum->tool.name, QStringLiteral("get-sum"));
    bool sawEcho = false;
    for (const QJsonValue &v : offered) {
        const QJsonObject fn = v.toObject().value(QStringLiteral("function")).toObject();
        if (fn.value(QStringLiteral("name")).toString() == QLatin1String("echo")) {
            sawEcho = true;
            QCOMPARE(fn.value(QStringLiteral("parameters")).toObject(), echo->inputSchema);
        }
    }
    QVERIFY(sawEcho);
    reply->deleteLater();
}

void TstMcpEverything::callsEcho()
{
    McpReply *reply = m_client->callTool(QStringLiteral("echo"), {{QStringLiteral("message"), QStringLiteral("héllo, MCP")}});
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->error() == McpReply::Error::None, qPrintable(describe(reply)));
    const McpToolResult result = McpToolResult::fromResult(reply->result());
    QVERIFY(!result.isError);
    QCOMPARE(result.content.first().toObject().value(QStringLiteral("type")).toString(), QStringLiteral("text"));
    QCOMPARE(result.text(), QStringLiteral("Echo: héllo, MCP"));
}

void TstMcpEverything::callsGetSum()
{
    McpReply *reply = m_client->callTool(QStringLiteral("get-sum"), {{QStringLiteral("a"), 19}, {QStringLiteral("b"), 23.5}});
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->error() == McpReply::Error::None, qPrintable(describe(reply)));
    const McpToolResult result = McpToolResult::fromResult(reply->result());
    QVERIFY(!result.isError);
    QVERIFY2(result.text().contains(QLatin1String("42.5")), qPrintable(result.text()));
}

void TstMcpEverything::badArgumentsAreReported()
{
    // A number where the schema wants a string: the server reports it either as a tool
    // result with isError or as a JSON-RPC error; both must reach the caller, saying so.
    McpReply *reply = m_client->callTool(QStringLiteral("echo"), {{QStringLiteral("message"), 5}});
    QVERIFY(waitFor(reply));
    if (reply->error() == McpReply::Error::Rpc) {
        QVERIFY(reply->rpcErrorCode() != 0);
        QVERIFY2(reply->errorString().contains(QLatin1String("message")), qPrintable(reply->errorString()));
    } else {
        QVERIFY2(reply->error() == McpReply::Error::None, qPrintable(describe(reply)));
        const McpToolResult result = McpToolResult::fromResult(reply->result());
        QVERIFY(result.isError);
        QVERIFY2(result.text().contains(QLatin1String("message")), qPrintable(result.text()));
    }
    // An unknown tool is refused too, and the connection serves the next call.
    McpReply *unknown = m_client->callTool(QStringLiteral("no-such-tool"), {});
    QVERIFY(waitFor(unknown));
    const bool refused = unknown->error() == McpReply::Error::Rpc
                         || McpToolResult::fromResult(unknown->result()).isError;
    QVERIFY2(refused, qPrintable(describe(unknown)));
    McpReply *echo = m_client->callTool(QStringLiteral("echo"), {{QStringLiteral("message"), QStringLiteral("still here")}});
    QVERIFY(waitFor(echo));
    QCOMPARE(McpToolResult::fromResult(echo->result()).text(), QStringLiteral("Echo: still here"));
}

void TstMcpEverything::timeoutLeavesTheConnectionUsable()
{
    m_client->setRequestTimeout(700);
    QElapsedTimer clock;
    clock.start();
    McpReply *slow = m_client->callTool(QStringLiteral("trigger-long-running-operation"),
                                        {{QStringLiteral("duration"), 5}, {QStringLiteral("steps"), 5}});
    QVERIFY(waitFor(slow, 10000));
    QCOMPARE(slow->error(), McpReply::Error::Timeout);
    QVERIFY(clock.elapsed() < 4000);
    QVERIFY2(slow->errorString().contains(QLatin1String("did not answer within 700 ms")), qPrintable(slow->errorString()));
    m_client->setRequestTimeout(20000);
    McpReply *echo = m_client->callTool(QStringLiteral("echo"), {{QStringLiteral("message"), QStringLiteral("after")}});
    QVERIFY(waitFor(echo));
    QVERIFY2(echo->error() == McpReply::Error::None, qPrintable(describe(echo)));
    QCOMPARE(McpToolResult::fromResult(echo->result()).text(), QStringLiteral("Echo: after"));
    QCOMPARE(m_client->state(), McpClient::State::Ready);
}

void TstMcpEverything::serverKilledMidCall()
{
    QSignalSpy failed(m_client, &McpClient::failed);
    McpReply *slow = m_client->callTool(QStringLiteral("trigger-long-running-operation"),
                                        {{QStringLiteral("duration"), 30}, {QStringLiteral("steps"), 3}});
    McpReply *second = m_client->callTool(QStringLiteral("trigger-long-running-operation"),
                                          {{QStringLiteral("duration"), 30}, {QStringLiteral("steps"), 3}});
    QTest::qWait(500); // both calls are with the server now
    const qint64 pid = static_cast<McpStdioTransport *>(m_client->transport())->processId();
    QVERIFY(pid > 0);
    QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
    QVERIFY(waitFor(slow, 5000));
    QVERIFY(waitFor(second, 5000));
    for (McpReply *r : {slow, second}) {
        QCOMPARE(r->error(), McpReply::Error::ServerUnavailable);
        QVERIFY2(r->errorString().contains(QLatin1String("killed or crashed")), qPrintable(r->errorString()));
    }
    QCOMPARE(failed.count(), 1);
    QCOMPARE(m_client->state(), McpClient::State::Closed);
    McpReply *late = m_client->listTools();
    QVERIFY(waitFor(late, 2000));
    QCOMPARE(late->error(), McpReply::Error::ServerUnavailable);
}

void TstMcpEverything::streamableHttp()
{
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const quint16 port = probe.serverPort();
    probe.close();
    QProcess server;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PORT"), QString::number(port));
    server.setProcessEnvironment(env);
    server.setProcessChannelMode(QProcess::ForwardedChannels);
    server.start(QStringLiteral("node"), {serverScript(), QStringLiteral("streamableHttp")});
    QVERIFY(server.waitForStarted(10000));
    auto stop = qScopeGuard([&] {
        server.kill();
        server.waitForFinished(5000);
    });

    // The server needs a moment to listen; a refused handshake is retried until it does.
    McpClient *client = nullptr;
    for (int attempt = 0; attempt < 50 && !client; ++attempt) {
        auto *c = new McpClient(new McpHttpTransport(QUrl(QStringLiteral("http://127.0.0.1:%1/mcp").arg(port))));
        QSignalSpy ready(c, &McpClient::ready);
        QSignalSpy failed(c, &McpClient::failed);
        c->connectToServer();
        QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !failed.isEmpty(), 10000);
        if (!ready.isEmpty()) {
            client = c;
        } else {
            delete c;
            QTest::qWait(200);
        }
    }
    QVERIFY2(client, "the streamable-HTTP server never completed the handshake");
    std::unique_ptr<McpClient> owner(client);
    QVERIFY(!static_cast<McpHttpTransport *>(client->transport())->sessionId().isEmpty());

    McpReply *list = client->listTools();
    QVERIFY(waitFor(list));
    QVERIFY2(list->error() == McpReply::Error::None, qPrintable(describe(list)));
    QVERIFY(McpTool::listFromResult(list->result()).size() >= 3);
    McpReply *echo = client->callTool(QStringLiteral("echo"), {{QStringLiteral("message"), QStringLiteral("over HTTP")}});
    QVERIFY(waitFor(echo));
    QVERIFY2(echo->error() == McpReply::Error::None, qPrintable(describe(echo)));
    QCOMPARE(McpToolResult::fromResult(echo->result()).text(), QStringLiteral("Echo: over HTTP"));
    McpReply *sum = client->callTool(QStringLiteral("get-sum"), {{QStringLiteral("a"), 2}, {QStringLiteral("b"), 3}});
    QVERIFY(waitFor(sum));
    QVERIFY2(McpToolResult::fromResult(sum->result()).text().contains(QLatin1Char('5')), qPrintable(describe(sum)));
    client->disconnectFromServer();
    QCOMPARE(client->state(), McpClient::State::Closed);
}

QTEST_GUILESS_MAIN(TstMcpEverything)
#include "tst_mcp_everything.moc"
