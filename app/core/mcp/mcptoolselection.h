// McpToolSelection: which MCP servers and tools one chat offers the model. Everything the
// connected servers list is offered unless turned off here, so a server added later is offered
// to every chat until a chat turns it off. Kept with the conversation as a JSON text.
#pragma once

#include <QMap>
#include <QString>
#include <QStringList>

struct McpToolSelection {
    QStringList offServers;              // server names turned off as a whole
    QMap<QString, QStringList> offTools; // server name -> its MCP tool names turned off

    bool offersServer(const QString &server) const { return !offServers.contains(server); }
    bool offers(const QString &server, const QString &tool) const
    {
        return offersServer(server) && !offTools.value(server).contains(tool);
    }
    void setServer(const QString &server, bool on);
    void setTool(const QString &server, const QString &tool, bool on);

    // {"servers": [...], "tools": {"server": [...]}}; "" when everything is offered.
    QString toJson() const;
    // Text that is not such an object (an older database's empty column) offers everything.
    static McpToolSelection fromJson(const QString &text);

    bool operator==(const McpToolSelection &) const = default;
};
