// Reads tool calls out of a model's reply. Accepted forms: the whole reply is
// {"name": ..., "arguments": {...}} (what a forced tool call's constraint produces), a JSON
// array of those, or one or more <tool_call>{...}</tool_call> blocks around optional text.
// Only functions declared in the request's tools count; anything else stays plain text.
#pragma once

#include <QJsonArray>
#include <QList>
#include <QString>

struct ToolCall {
    QString id;        // "call_<hex>"
    QString name;
    QString arguments; // a JSON object, serialised (OpenAI sends arguments as a string)
};

struct ParsedReply {
    QString content; // text outside tool calls (trimmed), may be empty
    QList<ToolCall> toolCalls;
    QString reasoning; // a thinking model's reasoning, apart from the answer
};

ParsedReply parseToolCalls(const QString &reply, const QJsonArray &tools);
