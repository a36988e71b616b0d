// McpClient's failure paths against real processes and sockets that misbehave (a command
// that does not exist, a server that hangs, one that writes garbage, one that exits, an HTTP
// endpoint nobody listens on), and McpToolSet's OpenAI "tools" array. The conversation with
// a real MCP server is tst_mcp_everything.
#include "mcp/mcpclient.h"
#include "mcp/mcphttptransport.h"
#include "mcp/mcpserverconfig.h"
#include "mcp/mcpstdiotransport.h"
#include "mcp/mcptoolset.h"

#include <QJsonArray>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTcpServer>
#include <QtTest>

namespace {
// A client for `sh -c SCRIPT`, a stand-in server that fails in the way the script says.
McpClient *shellServer(const QString &script, QObject *parent)
{
    return new McpClient(new McpStdioTransport(QStringLiteral("sh"), {QStringLiteral("-c"), script}), parent);
}
} // namespace

class TstMcpClient : public QObject
{
    Q_OBJECT
private slots:
    void missingCommandFailsTheHandshake();
    void hangingServerTimesOut();
    void garbageOnStdoutIsReported();
    void exitingServerSaysHowItExited();
    void requestsBeforeConnectFail();
    void unreachableHttpEndpoint();
    void toolSetMakesOpenAiTools();
    void toolSetResolvesClashes();
    void serverListPersists();
};

void TstMcpClient::missingCommandFailsTheHandshake()
{
    auto *client = new McpClient(new McpStdioTransport(QStringLiteral("/nonexistent/mcp-server-xyz"), {}), this);
    QSignalSpy failed(client, &McpClient::failed);
    QSignalSpy ready(client, &McpClient::ready);
    McpReply *queued = client->listTools(); // asked before the handshake: waits, then fails
    QCOMPARE(queued->isFinished(), false);
    client->connectToServer();
    QVERIFY(failed.wait(5000));
    QCOMPARE(ready.count(), 0);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("could not be started")),
             qPrintable(failed.at(0).at(0).toString()));
    QVERIFY(failed.at(0).at(0).toString().contains(QLatin1String("/nonexistent/mcp-server-xyz")));
    QVERIFY(queued->isFinished());
    QCOMPARE(queued->error(), McpReply::Error::ServerUnavailable);
    QCOMPARE(client->state(), McpClient::State::Closed);
    delete client;
}

void TstMcpClient::hangingServerTimesOut()
{
    McpClient *client = shellServer(QStringLiteral("exec sleep 30"), this);
    client->setRequestTimeout(400);
    QSignalSpy failed(client, &McpClient::failed);
    QElapsedTimer clock;
    clock.start();
    client->connectToServer();
    QVERIFY(failed.wait(5000));
    QVERIFY2(clock.elapsed() < 4000, "the time limit did not end the wait");
    QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("did not answer within 400 ms")),
             qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(failed.count(), 1);
    delete client; // the sleeping child is killed with it
}

void TstMcpClient::garbageOnStdoutIsReported()
{
    // Reads the initialize request, then answers with a line that is not JSON.
    McpClient *client = shellServer(QStringLiteral("read line; echo 'Server ready!'; exec sleep 30"), this);
    QSignalSpy failed(client, &McpClient::failed);
    client->connectToServer();
    QVERIFY(failed.wait(5000));
    const QString reason = failed.at(0).at(0).toString();
    QVERIFY2(reason.contains(QLatin1String("not a JSON-RPC message")), qPrintable(reason));
    QVERIFY2(reason.contains(QLatin1String("Server ready!")), qPrintable(reason));
    delete client;
}

void TstMcpClient::exitingServerSaysHowItExited()
{
    McpClient *client = shellServer(QStringLiteral("read line; echo 'no config file' >&2; exit 3"), this);
    QSignalSpy failed(client, &McpClient::failed);
    client->connectToServer();
    QVERIFY(failed.wait(5000));
    const QString reason = failed.at(0).at(0).toString();
    QVERIFY2(reason.contains(QLatin1String("exited with code 3")), qPrintable(reason));
    QVERIFY2(reason.contains(QLatin1String("no config file")), qPrintable(reason));
    delete client;
}

void TstMcpClient::requestsBeforeConnectFail()
{
    McpClient *client = shellServer(QStringLiteral("exit 0"), this);
    McpReply *reply = client->callTool(QStringLiteral("echo"), {});
    QSignalSpy finished(reply, &McpReply::finished);
    QVERIFY(finished.wait(10000)); // finished later, so the caller could connect first
    QCOMPARE(reply->error(), McpReply::Error::ServerUnavailable);
    QVERIFY(reply->errorString().startsWith(QLatin1String("tools/call: not connected")));
    delete client;
}

void TstMcpClient::unreachableHttpEndpoint()
{
    // A port that was just free: nothing listens there.
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const quint16 port = probe.serverPort();
    probe.close();
    auto *client = new McpClient(
        new McpHttpTransport(QUrl(QStringLiteral("http://127.0.0.1:%1/mcp").arg(port))), this);
    QSignalSpy failed(client, &McpClient::failed);
    client->connectToServer();
    QVERIFY(failed.wait(5000));
    const QString reason = failed.at(0).at(0).toString();
    QVERIFY2(reason.contains(QLatin1String("cannot be reached")), qPrintable(reason));
    QCOMPARE(client->state(), McpClient::State::Closed);
    delete client;
}

void TstMcpClient::toolSetMakesOpenAiTools()
{
    McpToolSet set;
    const QJsonObject schema{{QStringLiteral("type"), QStringLiteral("object")},
                             {QStringLiteral("properties"),
                              QJsonObject{{QStringLiteral("message"), QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}}},
                             {QStringLiteral("required"), QJsonArray{QStringLiteral("message")}}};
    set.setServerTools(QStringLiteral("everything"),
                       McpTool::listFromResult(QJsonObject{
                           {QStringLiteral("tools"),
                            QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("echo")},
                                                   {QStringLiteral("description"), QStringLiteral("Echoes")},
                                                   {QStringLiteral("inputSchema"), schema}},
                                       QJsonObject{{QStringLiteral("name"), QStringLiteral("files.read/v2")}},
                                       QJsonObject{{QStringLiteral("description"), QStringLiteral("nameless")}}}}}));
    const QJsonArray tools = set.openAiTools();
    QCOMPARE(tools.size(), 2); // the nameless entry cannot be called
    const QJsonObject echo = tools.at(0).toObject();
    QCOMPARE(echo.value(QStringLiteral("type")).toString(), QStringLiteral("function"));
    const QJsonObject fn = echo.value(QStringLiteral("function")).toObject();
    QCOMPARE(fn.value(QStringLiteral("name")).toString(), QStringLiteral("echo"));
    QCOMPARE(fn.value(QStringLiteral("description")).toString(), QStringLiteral("Echoes"));
    QCOMPARE(fn.value(QStringLiteral("parameters")).toObject(), schema);
    const QJsonObject other = tools.at(1).toObject().value(QStringLiteral("function")).toObject();
    QCOMPARE(other.value(QStringLiteral("name")).toString(), QStringLiteral("files_read_v2"));
    QVERIFY(!other.contains(QStringLiteral("description")));
    QCOMPARE(other.value(QStringLiteral("parameters")).toObject().value(QStringLiteral("type")).toString(),
             QStringLiteral("object"));
    const McpToolSet::Entry *e = set.resolve(QStringLiteral("files_read_v2"));
    QVERIFY(e);
    QCOMPARE(e->tool.name, QStringLiteral("files.read/v2"));
    QCOMPARE(e->server, QStringLiteral("everything"));
    QVERIFY(!set.resolve(QStringLiteral("files.read/v2")));
}

void TstMcpClient::toolSetResolvesClashes()
{
    McpToolSet set;
    auto tool = [](const QString &name) {
        McpTool t;
        t.name = name;
        return t;
    };
    set.setServerTools(QStringLiteral("a"), {tool(QStringLiteral("search")), tool(QStringLiteral("x_search"))});
    set.setServerTools(QStringLiteral("x"), {tool(QStringLiteral("search")), tool(QStringLiteral("only"))});
    QStringList names;
    for (const McpToolSet::Entry &e : set.entries())
        names.append(e.functionName);
    // "search" clashes, so both get their server's name; x's then meets a's own "x_search".
    QCOMPARE(names, (QStringList{QStringLiteral("a_search"), QStringLiteral("x_search"),
                                 QStringLiteral("x_search_2"), QStringLiteral("only")}));
    QCOMPARE(set.resolve(QStringLiteral("x_search_2"))->server, QStringLiteral("x"));
    QCOMPARE(set.resolve(QStringLiteral("x_search"))->server, QStringLiteral("a"));
    set.removeServer(QStringLiteral("a"));
    QCOMPARE(set.entries().size(), 2);
    QCOMPARE(set.entries().at(0).functionName, QStringLiteral("search")); // no clash left
}

void TstMcpClient::serverListPersists()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("settings.ini"));
    McpServerConfig stdio;
    stdio.name = QStringLiteral("everything");
    stdio.program = QStringLiteral("npx");
    stdio.arguments = {QStringLiteral("-y"), QStringLiteral("@modelcontextprotocol/server-everything"), QStringLiteral("a b")};
    McpServerConfig http;
    http.name = QStringLiteral("remote");
    http.kind = McpServerConfig::Kind::Http;
    http.url = QUrl(QStringLiteral("https://example.org/mcp"));
    http.enabled = false;
    {
        QSettings settings(file, QSettings::IniFormat);
        McpServerConfig::save(settings, {stdio, http});
    }
    QSettings again(file, QSettings::IniFormat);
    const QList<McpServerConfig> loaded = McpServerConfig::load(again);
    QCOMPARE(loaded.size(), 2);
    QVERIFY(loaded.at(0) == stdio); // order, arguments with spaces and the enabled flag kept
    QVERIFY(loaded.at(1) == http);
    QVERIFY(loaded.at(0).problem().isEmpty());
    QVERIFY(loaded.at(1).problem().isEmpty());

    std::unique_ptr<McpTransport> t1(loaded.at(0).makeTransport());
    QVERIFY(qobject_cast<McpStdioTransport *>(t1.get()));
    std::unique_ptr<McpTransport> t2(loaded.at(1).makeTransport());
    QVERIFY(qobject_cast<McpHttpTransport *>(t2.get()));

    McpServerConfig bad = http;
    bad.url = QUrl(QStringLiteral("ftp://example.org"));
    QVERIFY(bad.problem().contains(QLatin1String("http://")));
    bad = stdio;
    bad.program.clear();
    QVERIFY(bad.problem().contains(QLatin1String("command")));
    bad.name.clear();
    QVERIFY(bad.problem().contains(QLatin1String("name")));
}

QTEST_GUILESS_MAIN(TstMcpClient)
#include "tst_mcpclient.moc"
