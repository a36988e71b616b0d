// ChatContextMeter: the chat's context meter. How many tokens the open conversation, the draft
// and the offered tool declarations take of the open context, counted on the engine thread
// once typing pauses; what the count is made of (the tools and each server's share, from
// ToolCost; the template on an empty chat); when the tools leave no room, a warning that says
// so with the ways out (fewer tools, a larger context and its RAM); how long reading the
// unread part would take at the open model's prompt reading rate (the read estimate).
// Part of ChatController, which shows its figures to QML.
#pragma once

#include "chat/contextgrowth.h"
#include "engine/tokencount.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

class ConversationSession;
class EngineController;
class ToolCost;
class ToolLoop;

class ChatContextMeter : public QObject {
    Q_OBJECT

public:
    ChatContextMeter(EngineController *engine, ConversationSession *session, ToolLoop *tools, ToolCost *cost,
                     QObject *parent = nullptr);

    int used() const { return m_used; }
    int limit() const;
    QString warning() const;
    QString note() const;
    QString readEstimate() const;
    // The offered tools with the template and the answer's room do not fit the context: why,
    // naming the tools and each server's tokens, and the ways out; else "".
    QString toolsDoNotFit() const;
    // The prompt cannot be sent at all: its template and tools alone fill the context.
    bool toolsFillContext() const;
    // The context the ways out offer (0: none larger is large enough) and its RAM cost.
    ContextGrowth largerContext() const;
    // The open model's predicted prompt reading rate, tokens per second; 0: not known.
    void setReadRate(double tokensPerSecond);
    // What the last answer of a conversation left in the engine's state (read, not unread).
    void setReadTokens(qint64 conversationId, int tokens) { m_readTokens[conversationId] = tokens; }

    // The composer's text: counted once typing pauses.
    void setDraft(const QString &text);
    // Sent or dropped with its conversation; counted with the next recount.
    void clearDraft() { m_draft.clear(); }
    // Counts now / once changes pause.
    void recount();
    void recountSoon() { m_recountTimer.start(); }

Q_SIGNALS:
    void contextChanged();

private:
    void onCounted(int tokens);

    EngineController *m_engine;
    ConversationSession *m_session;
    ToolLoop *m_tools;
    ToolCost *m_cost;
    QString m_draft;
    QPointer<TokenCount> m_count; // the latest count; earlier ones are no longer listened to
    QTimer m_recountTimer;        // draft edits: one count after typing pauses
    static constexpr int kDraftRecountMs = 150;
    int m_used = 0;
    double m_readRate = 0;
    QHash<qint64, int> m_readTokens;     // per conversation: tokens its last answer left in the engine's state
    bool m_countingTemplateOnly = false; // the count on its way has no message and no draft
    bool m_templateOnly = false;         // so has the count shown
    // The planner's answer for the last (model, context, need) asked: it reads the manifest.
    mutable QString m_growthKey;
    mutable ContextGrowth m_growth;
};
