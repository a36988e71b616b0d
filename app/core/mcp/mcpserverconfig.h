#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

class McpTransport;
class QSettings;

// One MCP server the person added in settings: a command the app starts (stdio) or the URL
// of a streamable-HTTP endpoint. Persisted in QSettings as a JSON array, so that the list
// keeps its order and each entry its fields as one value.
struct McpServerConfig
{
    enum class Kind { Stdio, Http };

    QString name;          // the person's name for it; unique in the list
    Kind kind = Kind::Stdio;
    QString program;       // Kind::Stdio
    QStringList arguments; // Kind::Stdio
    QUrl url;              // Kind::Http
    bool enabled = true;

    // Why the entry cannot be used (empty when it can): shown next to it in settings.
    QString problem() const;
    // A new transport for it (the caller, normally McpClient, owns it).
    McpTransport *makeTransport() const;

    QJsonObject toJson() const;
    static McpServerConfig fromJson(const QJsonObject &o);

    // The list under settings key "mcp/servers"; unreadable entries are dropped on load.
    static QList<McpServerConfig> load(const QSettings &settings);
    static void save(QSettings &settings, const QList<McpServerConfig> &servers);

    bool operator==(const McpServerConfig &) const = default;
};
