// Value types of the chat: one message, one conversation and its per-conversation settings.
// Plain values so the store, the models and the controller can pass them around freely.
#pragma once

#include "mcp/mcptoolselection.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

struct ConversationSettings {
    QString systemPrompt;
    double temperature = 0.7;
    double topP = 0.95;
    int maxTokens = 1024;
    bool thinking = true;
    // Most tokens the model may think before it must answer (waste::makeThinkingBudget);
    // 0: no limit.
    int thinkingBudget = 0;
    // The MCP servers and tools this chat offers (all connected ones unless turned off).
    McpToolSelection tools;
    bool operator==(const ConversationSettings &) const = default;
};

struct Conversation {
    qint64 id = 0;
    QString title;
    QDateTime created;
    QDateTime updated;
    ConversationSettings settings;
    // The model the conversation is with (EngineController::modelPath, "remote:ID" for a
    // remote engine) and its name then, so a model gone since can still be named. Empty in
    // conversations stored before models were recorded: tied on their next answer.
    QString modelPath;
    QString modelName;
};

struct ChatMessage {
    qint64 id = 0;     // row id in the store; 0 until saved
    QString role;      // "user", "assistant" or "tool" (an MCP tool's call and its result)
    // assistant: the answer and the thinking channel exactly as the model's reply parser
    // released them (a K3 history repeats them; the view trims them). user: what they wrote.
    QString text;
    QString thinking;
    // assistant: the reply exactly as the model wrote it (thinking and channel markers
    // included); the next prompt repeats it so the engine state can be kept (dialogue.h).
    QString raw;
    bool openedThinking = false; // assistant: its prompt opened the thinking channel (K3)
    double thinkingSeconds = 0;
    QStringList imagePaths;
    int tokens = 0;    // tokens this message takes in the prompt (0: not counted yet)
    // Figures under an answer.
    double tokensPerSecond = 0;
    double hitRate = 0;
    QString finishReason;
    QString error;     // why the answer failed, in words
    QDateTime created;
    bool streaming = false; // not stored: the answer is still arriving
    // Tool use (MCP), stored as one JSON value. assistant: {"calls": [{id, name, arguments}]},
    // the calls the answer made. tool: the one call this message answers, {id, name, server,
    // tool, arguments, status}, status being awaiting (approval), running, done, failed or
    // denied; its text is then the result the model reads (or why there is none).
    QJsonObject tool;

    QJsonArray toolCalls() const { return tool.value(QLatin1String("calls")).toArray(); }
    QString toolStatus() const { return tool.value(QLatin1String("status")).toString(); }
    // A tool message whose outcome is still open (the answer cannot go on before it is known).
    bool toolOpen() const
    {
        return role == QLatin1String("tool")
               && (toolStatus() == QLatin1String("awaiting") || toolStatus() == QLatin1String("running"));
    }
};
