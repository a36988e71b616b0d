// A chat reply as the API server sends it back: the engine's parsed reply (reasoning,
// content, calls of declared tools: waste::Model::replyParser) with the ids this server
// gives each call.
#pragma once

#include <QList>
#include <QString>

struct ToolCall {
    QString id;        // "call_<hex>"
    QString name;
    QString arguments; // a JSON object, serialised (OpenAI sends arguments as a string)
};

struct ParsedReply {
    QString content; // text outside tool calls, may be empty
    QList<ToolCall> toolCalls;
    QString reasoning; // a thinking model's reasoning, apart from the answer
};
