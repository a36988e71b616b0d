// ToolLoop: the chat's MCP tools. Which tools an answer is offered (McpHub's, as far as the
// open chat's own selection of servers and tools and the tool choice allow), the calls a finished answer made, a tool message for each call, the person's
// approval, running the call and settling its result. Once no call of the answer is left
// open it says so (readyToContinue) and ChatController starts the answer again.
// Part of ChatController: the messages and the store it changes are ConversationSession's.
#pragma once

#include "chat/chatmessage.h"

#include <QHash>
#include <QJsonArray>
#include <QObject>
#include <QString>

class ConversationSession;
struct GenerationResult;
class McpHub;
class McpReply;

class ToolLoop : public QObject {
    Q_OBJECT

public:
    explicit ToolLoop(ConversationSession *session, QObject *parent = nullptr);

    // The MCP servers whose tools the chat offers (none until set).
    void setHub(McpHub *hub);
    McpHub *hub() const { return m_hub; }
    QString toolChoice() const { return m_toolChoice; }
    void setToolChoice(const QString &choice);
    // A call of the open conversation awaits approval or runs.
    bool pending() const;

    // The tools the next answer is offered, as an OpenAI-style tools array: the servers and
    // tools the open chat selects (ConversationSettings::tools), as the tool choice allows.
    QJsonArray offeredTools() const;
    // Offers a server's tools in the open chat or stops offering them (saved with the chat).
    void setServerOffered(const QString &server, bool on);
    void setToolOffered(const QString &server, const QString &tool, bool on);
    // The calls a finished answer made (its reply parser was given the offered tools), each
    // with an id of its own.
    static QJsonArray takeToolCalls(const GenerationResult &result);
    // A tool message for each call of the answer just saved; runs the ones allowed always.
    // `shown`: the answer's conversation is the open one (else the calls wait, stored).
    void openToolCalls(qint64 conversationId, const QJsonArray &calls, bool shown);
    // The person's answer ("once", "always", "deny") to the tool call shown at `row`.
    bool answer(int row, const QString &decision);

Q_SIGNALS:
    void toolChoiceChanged();
    void toolPendingChanged();
    // What the next prompt declares changed (servers' tools, the choice): count it again.
    void offerChanged();
    // Every call of the last answer has its outcome: the answer may continue.
    void readyToContinue();

private:
    struct ToolRun {                 // a tool call in flight
        qint64 conversationId = 0;
        ChatMessage message;
    };
    void runTool(int row);
    void settleTool(McpReply *reply);
    void updateToolMessage(qint64 conversationId, const ChatMessage &message);
    void continueAfterTools();
    void setSelection(const McpToolSelection &selection);

    ConversationSession *m_session;
    McpHub *m_hub = nullptr;
    QString m_toolChoice = QStringLiteral("auto");
    QHash<McpReply *, ToolRun> m_toolRuns;
};
