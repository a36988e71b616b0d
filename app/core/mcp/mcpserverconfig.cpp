#include "mcp/mcpserverconfig.h"

#include "mcp/mcphttptransport.h"
#include "mcp/mcpstdiotransport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>

namespace {
const QString kKey = QStringLiteral("mcp/servers");
}

QString McpServerConfig::problem() const
{
    if (name.trimmed().isEmpty())
        return QStringLiteral("the server needs a name");
    if (kind == Kind::Stdio)
        return program.trimmed().isEmpty() ? QStringLiteral("the server needs a command to start") : QString();
    if (!url.isValid() || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) || url.host().isEmpty())
        return QStringLiteral("the server's address must be an http:// or https:// URL");
    return {};
}

McpTransport *McpServerConfig::makeTransport() const
{
    if (kind == Kind::Http)
        return new McpHttpTransport(url);
    return new McpStdioTransport(program, arguments);
}

QJsonObject McpServerConfig::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name}, {QStringLiteral("enabled"), enabled}};
    if (kind == Kind::Http) {
        o.insert(QStringLiteral("url"), url.toString());
    } else {
        o.insert(QStringLiteral("command"), program);
        o.insert(QStringLiteral("args"), QJsonArray::fromStringList(arguments));
    }
    return o;
}

McpServerConfig McpServerConfig::fromJson(const QJsonObject &o)
{
    McpServerConfig c;
    c.name = o.value(QStringLiteral("name")).toString();
    c.enabled = o.value(QStringLiteral("enabled")).toBool(true);
    if (o.contains(QStringLiteral("url"))) {
        c.kind = Kind::Http;
        c.url = QUrl(o.value(QStringLiteral("url")).toString());
    } else {
        c.program = o.value(QStringLiteral("command")).toString();
        for (const QJsonValue &a : o.value(QStringLiteral("args")).toArray())
            c.arguments.append(a.toString());
    }
    return c;
}

QList<McpServerConfig> McpServerConfig::load(const QSettings &settings)
{
    QList<McpServerConfig> servers;
    const QJsonDocument doc = QJsonDocument::fromJson(settings.value(kKey).toString().toUtf8());
    for (const QJsonValue &v : doc.array()) {
        McpServerConfig c = fromJson(v.toObject());
        if (!c.name.isEmpty())
            servers.append(c);
    }
    return servers;
}

void McpServerConfig::save(QSettings &settings, const QList<McpServerConfig> &servers)
{
    QJsonArray array;
    for (const McpServerConfig &c : servers)
        array.append(c.toJson());
    settings.setValue(kKey, QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Compact)));
}
