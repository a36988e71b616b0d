#include "mcp/mcptoolselection.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

void McpToolSelection::setServer(const QString &server, bool on)
{
    offServers.removeAll(server);
    if (!on)
        offServers << server;
}

void McpToolSelection::setTool(const QString &server, const QString &tool, bool on)
{
    QStringList tools = offTools.value(server);
    tools.removeAll(tool);
    if (!on)
        tools << tool;
    if (tools.isEmpty())
        offTools.remove(server); // so "all on again" compares equal to the default
    else
        offTools.insert(server, tools);
}

QString McpToolSelection::toJson() const
{
    if (offServers.isEmpty() && offTools.isEmpty())
        return {};
    QJsonObject tools;
    for (auto it = offTools.cbegin(); it != offTools.cend(); ++it)
        tools.insert(it.key(), QJsonArray::fromStringList(it.value()));
    const QJsonObject o{{QStringLiteral("servers"), QJsonArray::fromStringList(offServers)},
                        {QStringLiteral("tools"), tools}};
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

McpToolSelection McpToolSelection::fromJson(const QString &text)
{
    McpToolSelection s;
    const QJsonObject o = QJsonDocument::fromJson(text.toUtf8()).object();
    for (const QJsonValue &v : o.value(QLatin1String("servers")).toArray())
        if (v.isString())
            s.offServers << v.toString();
    const QJsonObject tools = o.value(QLatin1String("tools")).toObject();
    for (auto it = tools.constBegin(); it != tools.constEnd(); ++it)
        for (const QJsonValue &v : it.value().toArray())
            if (v.isString())
                s.setTool(it.key(), v.toString(), false);
    return s;
}
