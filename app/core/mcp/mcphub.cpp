#include "mcp/mcphub.h"

#include "mcp/mcpclient.h"
#include "mcp/mcpreply.h"

#include <QProcess>
#include <QSettings>

namespace {
const QString kAlwaysKey = QStringLiteral("mcp/alwaysAllowed");

QString alwaysKey(const QString &server, const QString &tool)
{
    return server + QLatin1Char('\n') + tool;
}
} // namespace

McpHub::McpHub(QObject *parent) : QObject(parent)
{
    const QSettings settings;
    for (const QString &k : settings.value(kAlwaysKey).toStringList())
        m_always.insert(k);
    for (const McpServerConfig &c : McpServerConfig::load(settings)) {
        auto s = std::make_unique<Server>();
        s->config = c;
        m_servers.push_back(std::move(s));
    }
    for (auto &s : m_servers)
        if (s->config.enabled && s->config.problem().isEmpty())
            connectServer(*s);
}

McpHub::~McpHub()
{
    // Servers started by the app end with it (their clients close the processes).
    for (auto &s : m_servers)
        delete s->client.data();
}

McpHub::Server *McpHub::find(const QString &name) const
{
    for (const auto &s : m_servers)
        if (s->config.name == name)
            return s.get();
    return nullptr;
}

void McpHub::save() const
{
    QList<McpServerConfig> list;
    for (const auto &s : m_servers)
        list.append(s->config);
    QSettings settings;
    McpServerConfig::save(settings, list);
}

QVariantList McpHub::servers() const
{
    QVariantList out;
    for (const auto &s : m_servers) {
        const bool http = s->config.kind == McpServerConfig::Kind::Http;
        const QString address = http ? s->config.url.toString()
                                     : (QStringList{s->config.program} + s->config.arguments).join(QLatin1Char(' '));
        out.append(QVariantMap{{QStringLiteral("name"), s->config.name},
                               {QStringLiteral("kind"), http ? QStringLiteral("http") : QStringLiteral("stdio")},
                               {QStringLiteral("address"), address},
                               {QStringLiteral("state"), s->state},
                               {QStringLiteral("message"), s->message},
                               {QStringLiteral("tools"), s->tools}});
    }
    return out;
}

QStringList McpHub::toolNames() const
{
    QStringList names;
    for (const McpToolSet::Entry &e : m_tools.entries())
        names << e.functionName;
    return names;
}

QString McpHub::addStdioServer(const QString &name, const QString &commandLine)
{
    McpServerConfig c;
    c.name = name.trimmed();
    c.kind = McpServerConfig::Kind::Stdio;
    const QStringList words = QProcess::splitCommand(commandLine.trimmed());
    if (!words.isEmpty()) {
        c.program = words.first();
        c.arguments = words.mid(1);
    }
    return add(c);
}

QString McpHub::addHttpServer(const QString &name, const QString &url)
{
    McpServerConfig c;
    c.name = name.trimmed();
    c.kind = McpServerConfig::Kind::Http;
    c.url = QUrl(url.trimmed());
    return add(c);
}

QString McpHub::add(const McpServerConfig &config)
{
    if (const QString problem = config.problem(); !problem.isEmpty())
        return tr("Not added: %1.").arg(problem);
    if (find(config.name))
        return tr("Not added: a server named \"%1\" is already in the list; choose another name.").arg(config.name);
    auto s = std::make_unique<Server>();
    s->config = config;
    Server &server = *s;
    m_servers.push_back(std::move(s));
    save();
    connectServer(server);
    return {};
}

void McpHub::removeServer(const QString &name)
{
    for (auto it = m_servers.begin(); it != m_servers.end(); ++it) {
        if ((*it)->config.name != name)
            continue;
        delete (*it)->client.data();
        m_servers.erase(it);
        m_tools.removeServer(name);
        save();
        Q_EMIT serversChanged();
        Q_EMIT toolsChanged();
        return;
    }
}

void McpHub::reconnect(const QString &name)
{
    if (Server *s = find(name))
        connectServer(*s);
}

void McpHub::setRequestTimeout(int ms)
{
    m_timeoutMs = ms;
    for (auto &s : m_servers)
        if (s->client)
            s->client->setRequestTimeout(ms);
}

void McpHub::connectServer(Server &server)
{
    delete server.client.data();
    m_tools.removeServer(server.config.name);
    server.tools = 0;
    server.state = QStringLiteral("connecting");
    server.message.clear();
    auto *client = new McpClient(server.config.makeTransport(), this);
    client->setRequestTimeout(m_timeoutMs);
    server.client = client;
    const QString name = server.config.name;
    connect(client, &McpClient::ready, this, [this, name] { listTools(name, {}, {}); });
    connect(client, &McpClient::failed, this, [this, name, client](const QString &reason) {
        if (Server *s = find(name); s && s->client == client)
            setFailed(name, reason);
    });
    client->connectToServer();
    Q_EMIT serversChanged();
    Q_EMIT toolsChanged();
}

void McpHub::listTools(const QString &name, const QString &cursor, QList<McpTool> soFar)
{
    Server *s = find(name);
    if (!s || !s->client)
        return;
    McpReply *reply = s->client->listTools(cursor);
    connect(reply, &McpReply::finished, this, [this, name, reply, soFar]() mutable {
        reply->deleteLater();
        if (reply->error() != McpReply::Error::None) {
            setFailed(name, tr("listing its tools failed: %1").arg(reply->errorString()));
            return;
        }
        soFar += McpTool::listFromResult(reply->result());
        // The list may come in pages.
        if (const QString next = reply->result().value(QStringLiteral("nextCursor")).toString(); !next.isEmpty()) {
            listTools(name, next, soFar);
            return;
        }
        Server *s = find(name);
        if (!s)
            return;
        m_tools.setServerTools(name, soFar);
        s->tools = int(soFar.size());
        s->state = QStringLiteral("ready");
        Q_EMIT serversChanged();
        Q_EMIT toolsChanged();
    });
}

void McpHub::setFailed(const QString &name, const QString &message)
{
    Server *s = find(name);
    if (!s)
        return;
    s->state = QStringLiteral("failed");
    s->message = message;
    s->tools = 0;
    m_tools.removeServer(name);
    Q_EMIT serversChanged();
    Q_EMIT toolsChanged();
}

McpReply *McpHub::call(const QString &functionName, const QJsonObject &arguments, QString *error)
{
    const McpToolSet::Entry *entry = m_tools.resolve(functionName);
    if (!entry) {
        *error = tr("no connected MCP server offers a tool named \"%1\"").arg(functionName);
        return nullptr;
    }
    const Server *s = find(entry->server);
    if (!s || !s->client || s->client->state() != McpClient::State::Ready) {
        *error = tr("the MCP server \"%1\" is not connected").arg(entry->server);
        return nullptr;
    }
    return s->client->callTool(entry->tool.name, arguments);
}

bool McpHub::alwaysAllowed(const QString &server, const QString &tool) const
{
    return m_always.contains(alwaysKey(server, tool));
}

void McpHub::allowAlways(const QString &server, const QString &tool)
{
    m_always.insert(alwaysKey(server, tool));
    QSettings settings;
    settings.setValue(kAlwaysKey, QStringList(m_always.cbegin(), m_always.cend()));
}

McpClient *McpHub::client(const QString &name) const
{
    const Server *s = find(name);
    return s ? s->client.data() : nullptr;
}
