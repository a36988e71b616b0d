#include "mcp/mcptool.h"

#include <QStringList>

QList<McpTool> McpTool::listFromResult(const QJsonObject &result)
{
    QList<McpTool> tools;
    for (const QJsonValue &v : result.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject o = v.toObject();
        McpTool tool;
        tool.name = o.value(QStringLiteral("name")).toString();
        if (tool.name.isEmpty())
            continue;
        tool.description = o.value(QStringLiteral("description")).toString();
        tool.inputSchema = o.value(QStringLiteral("inputSchema")).toObject();
        tools.append(tool);
    }
    return tools;
}

McpToolResult McpToolResult::fromResult(const QJsonObject &result)
{
    McpToolResult r;
    r.content = result.value(QStringLiteral("content")).toArray();
    r.isError = result.value(QStringLiteral("isError")).toBool();
    return r;
}

QString McpToolResult::text() const
{
    QStringList parts;
    for (const QJsonValue &v : content) {
        const QJsonObject block = v.toObject();
        if (block.value(QStringLiteral("type")).toString() == QLatin1String("text"))
            parts.append(block.value(QStringLiteral("text")).toString());
    }
    return parts.join(QLatin1Char('\n'));
}
