#include "mcp/mcptoolset.h"

#include <QJsonObject>
#include <QHash>
#include <QSet>

namespace {
constexpr qsizetype kMaxName = 64;

QString sanitized(const QString &name)
{
    QString out;
    out.reserve(name.size());
    for (const QChar c : name) {
        const bool ok = (c >= QLatin1Char('a') && c <= QLatin1Char('z')) || (c >= QLatin1Char('A') && c <= QLatin1Char('Z'))
                        || (c >= QLatin1Char('0') && c <= QLatin1Char('9')) || c == QLatin1Char('_') || c == QLatin1Char('-');
        out.append(ok ? c : QLatin1Char('_'));
    }
    return out.left(kMaxName);
}
} // namespace

void McpToolSet::setServerTools(const QString &server, const QList<McpTool> &tools)
{
    removeServer(server);
    for (const McpTool &t : tools)
        m_entries.append({server, t, {}});
    assignNames();
}

void McpToolSet::removeServer(const QString &server)
{
    m_entries.removeIf([&](const Entry &e) { return e.server == server; });
    assignNames();
}

void McpToolSet::assignNames()
{
    // A tool keeps its own (sanitised) name when no other tool has it, so the model sees
    // the names the server's documentation uses; only clashes get the server's name in front
    // and, if that still clashes, a number.
    QHash<QString, int> plainCount;
    for (const Entry &e : std::as_const(m_entries))
        ++plainCount[sanitized(e.tool.name)];
    QSet<QString> taken;
    for (Entry &e : m_entries) {
        QString name = sanitized(e.tool.name);
        if (plainCount.value(name) > 1)
            name = sanitized(e.server + QLatin1Char('_') + e.tool.name);
        const QString base = name;
        for (int n = 2; taken.contains(name); ++n) {
            const QString suffix = QStringLiteral("_%1").arg(n);
            name = base.left(kMaxName - suffix.size()) + suffix;
        }
        taken.insert(name);
        e.functionName = name;
    }
}

QJsonArray McpToolSet::openAiTools(const McpToolSelection &selection) const
{
    QJsonArray tools;
    for (const Entry &e : m_entries) {
        if (!selection.offers(e.server, e.tool.name))
            continue;
        // A tool without a schema still takes an (empty) arguments object.
        const QJsonObject parameters = e.tool.inputSchema.isEmpty()
                                           ? QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                                                         {QStringLiteral("properties"), QJsonObject{}}}
                                           : e.tool.inputSchema;
        QJsonObject function{{QStringLiteral("name"), e.functionName}, {QStringLiteral("parameters"), parameters}};
        if (!e.tool.description.isEmpty())
            function.insert(QStringLiteral("description"), e.tool.description);
        tools.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                                 {QStringLiteral("function"), function}});
    }
    return tools;
}

const McpToolSet::Entry *McpToolSet::resolve(const QString &functionName) const
{
    for (const Entry &e : m_entries)
        if (e.functionName == functionName)
            return &e;
    return nullptr;
}
