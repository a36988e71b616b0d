#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

// One tool as an MCP server lists it (tools/list): what the model is offered.
struct McpTool
{
    QString name;
    QString description;
    QJsonObject inputSchema; // JSON Schema of the arguments object

    // Reads the tools of a tools/list result; entries without a name are skipped, since
    // nothing could call them.
    static QList<McpTool> listFromResult(const QJsonObject &result);
};

// What a tools/call returned: the content blocks (text, image, resource…) and whether the
// tool itself reported a failure (isError). A tool's failure is a result for the model to
// read, unlike a protocol error, which McpReply reports as its error.
struct McpToolResult
{
    QJsonArray content;
    bool isError = false;

    static McpToolResult fromResult(const QJsonObject &result);
    // The text blocks joined by newlines: what a chat shows collapsed and feeds the model.
    QString text() const;
};
