// ToolCost: what the MCP tools cost in the open chat's prompt, in tokens, per server. Counted
// through the engine's own rendering (EngineController::countDialogue), not estimated: the
// chat's empty prompt (template and system prompt) without tools, with the tools it offers,
// and once per server with that server's tools switched the other way; a server's cost is the
// difference its switch makes, i.e. what turning it off saves (or turning it on adds).
// Counted again when the offer, the system prompt or the model changes.
// Part of ChatController; ChatContextMeter explains its count with it.
#pragma once

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QVariantList>

class ConversationSession;
class EngineController;
class TokenCount;
class ToolLoop;

class ToolCost : public QObject {
    Q_OBJECT

public:
    struct Server {
        QString name;
        int tools = 0;        // tools the server lists
        int offeredTools = 0; // of those, the ones this chat offers
        int tokens = 0;       // what its tools take in (or would add to) this chat's prompt
    };

    ToolCost(EngineController *engine, ConversationSession *session, ToolLoop *tools, QObject *parent = nullptr);

    // All counts of the latest recount have come back.
    bool counted() const { return m_counted; }
    // Tokens the offered tools add to every prompt of this chat (0: none offered).
    int offeredTokens() const { return m_counted ? m_offeredTokens : 0; }
    // The prompt every answer of this chat starts from: template, system prompt, offered tools.
    int baseTokens() const { return m_counted ? m_baseTokens : 0; }
    const QList<Server> &servers() const { return m_servers; }
    // "everything 4,180, files 310": the offered servers with what each costs.
    QString offeredBreakdown() const;
    // One map per server with tools (name, tools, offeredTools, tokens, offered, toolList:
    // [{name, offered}]) for the chat's Tools panel.
    QVariantList serversForQml() const;

    void recount();
    void recountSoon();

Q_SIGNALS:
    void changed();

private:
    void onCounted(int index, int tokens);
    void clear();

    EngineController *m_engine;
    ConversationSession *m_session;
    ToolLoop *m_tools;
    QList<QPointer<TokenCount>> m_pending; // this recount's counts; earlier ones are dropped
    QList<int> m_results;                  // [no tools, offered, each server switched]
    int m_waiting = 0;
    bool m_counted = false;
    bool m_anyOffered = false;             // the tool choice offers the tools at all
    bool m_recountQueued = false;
    int m_baseTokens = 0;
    int m_offeredTokens = 0;
    QList<Server> m_servers;
};
