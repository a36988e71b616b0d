#pragma once

#include "mcp/mcptool.h"
#include "mcp/mcptoolselection.h"

#include <QJsonArray>
#include <QList>
#include <QString>

// The tools of every connected MCP server as the chat offers them to the model: an
// OpenAI-style "tools" array (type function, name, description, parameters), the shape the
// chat's tool format and the engine's renderers take (ApiRequest::tools). Function names
// must be [A-Za-z0-9_-]{1,64} there and unique across servers, while MCP names may hold
// other characters and repeat between servers; so each tool gets a function name of its
// own, and a call the model makes is resolved back to its server and MCP name.
class McpToolSet
{
public:
    struct Entry
    {
        QString server;       // the caller's name for the server the tool came from
        McpTool tool;
        QString functionName; // the name the model sees and calls
    };

    // Replaces the tools of one server (a new tools/list result for it).
    void setServerTools(const QString &server, const QList<McpTool> &tools);
    void removeServer(const QString &server);

    // The tools `selection` offers (by default all of them).
    QJsonArray openAiTools(const McpToolSelection &selection = {}) const;
    // The entry the model's call names, or nullptr when no tool has that function name.
    const Entry *resolve(const QString &functionName) const;
    const QList<Entry> &entries() const { return m_entries; }

private:
    void assignNames();

    QList<Entry> m_entries;
};
