// McpHub: the MCP servers the person added in Settings, connected while the app runs. It keeps
// the list (persisted through McpServerConfig), one McpClient per enabled server, each server's
// state in words for the settings page, the tools of the ready ones as the chat offers them
// (McpToolSet), and the tools the person allowed to run without asking. A server that fails
// to start, answers nothing or exits takes its tools out of the offer and says why; the chat
// loses nothing by it.
#pragma once

#include "mcp/mcptoolset.h"
#include "mcp/mcpserverconfig.h"
#include "singleton/appsingleton.h"

#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QSet>
#include <QVariantList>

#include <memory>
#include <vector>

class McpClient;
class McpReply;

class McpHub : public QObject, public AppSingleton<McpHub> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    // One map per server: name, kind ("stdio"/"http"), address (command line or URL),
    // state ("connecting", "ready", "failed"), message (why it failed), tools (count).
    Q_PROPERTY(QVariantList servers READ servers NOTIFY serversChanged)
    // The function names the model is offered, for the chat's tool choice.
    Q_PROPERTY(QStringList toolNames READ toolNames NOTIFY toolsChanged)

public:
    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    explicit McpHub(QObject *parent);
    ~McpHub() override;

    QVariantList servers() const;
    QStringList toolNames() const;
    const McpToolSet &toolSet() const { return m_tools; }

    // Add a server and connect to it; an empty string when added, else what is wrong with it.
    // The command line is split like a shell would (quotes group words).
    Q_INVOKABLE QString addStdioServer(const QString &name, const QString &commandLine);
    Q_INVOKABLE QString addHttpServer(const QString &name, const QString &url);
    Q_INVOKABLE void removeServer(const QString &name);
    // Connect again (after it failed, or to read a changed tool list).
    Q_INVOKABLE void reconnect(const QString &name);

    // Time limit of every request, the handshake and tool calls included (30 s by default).
    void setRequestTimeout(int ms);
    int requestTimeout() const { return m_timeoutMs; }

    // Calls the tool the model named by its function name. Null, with the reason in `error`,
    // when no offered tool has that name or its server is not connected.
    McpReply *call(const QString &functionName, const QJsonObject &arguments, QString *error);
    // "Always for this tool": by server and the tool's own name, kept in the settings.
    bool alwaysAllowed(const QString &server, const QString &tool) const;
    void allowAlways(const QString &server, const QString &tool);
    // The client of a server (null when it has none): lets tests reach the process.
    McpClient *client(const QString &name) const;

Q_SIGNALS:
    void serversChanged();
    void toolsChanged();

private:
    struct Server {
        McpServerConfig config;
        QPointer<McpClient> client;
        QString state;
        QString message;
        int tools = 0;
    };

    QString add(const McpServerConfig &config);
    void connectServer(Server &server);
    void listTools(const QString &name, const QString &cursor, QList<McpTool> soFar);
    void setFailed(const QString &name, const QString &message);
    Server *find(const QString &name) const;
    void save() const;

    std::vector<std::unique_ptr<Server>> m_servers;
    McpToolSet m_tools;
    QSet<QString> m_always;
    int m_timeoutMs = 30000;
};
