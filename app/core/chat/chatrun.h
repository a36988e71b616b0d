// ChatRun: one answer being generated. Builds the GenerationRequest from the open
// conversation (rendered with the model's chat template, the offered tools, a forced call or
// a thinking budget as constraints), applies the streamed batches, read by the model's reply
// parser (thinking apart from the answer), to the message on the GUI thread, keeps the
// answer in the store as a draft while it grows and saves it when it ends (finished, stopped
// or failed); then hands the calls it made to the ToolLoop. An answer keeps going (and is
// saved) when another conversation is opened meanwhile. Also stop, regenerate, edit-and-resend
// and the clock shown while the prompt is read (PrefillClock).
// Part of ChatController, which shows its state to QML.
#pragma once

#include "chat/chatmessage.h"
#include "chat/prefillclock.h"
#include "generation/generationtypes.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QObject>
#include <QString>

#include <optional>

class ChatContextMeter;
class ConversationSession;
class EngineController;
class GenerationHandle;
class ToolLoop;

class ChatRun : public QObject {
    Q_OBJECT

public:
    ChatRun(EngineController *engine, ConversationSession *session, ChatContextMeter *meter, ToolLoop *tools,
            QObject *parent = nullptr);

    bool active() const { return m_run.has_value(); }
    bool prefilling() const { return m_run && m_run->prefilling; }
    double prefillProgress() const { return m_run ? m_run->prefill.fraction() : 0; }
    QString prefillText() const { return m_run ? m_run->prefill.text() : QString(); }
    // The answer arriving for this conversation, or null.
    const ChatMessage *messageFor(qint64 conversationId) const;

    // Answers the open conversation's last user message (or the results of the tool calls
    // its last answer made). False when there is nothing to answer or it cannot be rendered.
    bool start();
    void stop();
    // The answer's conversation is being deleted: stop, with nowhere left to save it.
    void abandon(qint64 conversationId);
    // Answers the last user message again (drops the last answer).
    bool regenerate();
    // Replaces the user message at `row`, drops everything after it, and answers again.
    bool editAndResend(int row, const QString &text);

Q_SIGNALS:
    void generatingChanged();
    void prefillProgressChanged();
    // An answer ended (finished, stopped or failed) and was saved.
    void answerSaved(qint64 conversationId);
    // A sentence for the person (ChatController::notice).
    void noticeRequested(const QString &text);

private:
    struct Run {
        GenerationHandle *handle = nullptr; // the engine's; deleted by it after the end
        qint64 conversationId = 0;
        ChatMessage message;
        QString raw;                 // the reply so far, as the model writes it
        bool replyEnded = false;     // the reply parser has released the whole reply
        QElapsedTimer clock;
        double thinkingStarted = -1;
        bool prefilling = true;
        PrefillClock prefill;
        QJsonArray tools;            // offered to the model in this answer
        QElapsedTimer sinceSaved;    // since the answer so far was last written to the store
    };
    // An answer is in the store from its start, marked kInterrupted, and rewritten as it
    // grows at most this often: if the app dies mid-answer, the chat reopens with the
    // question, what was written so far, and Regenerate.
    static constexpr int kDraftSaveMs = 500;
    // Whether no answer may start now (another model's conversation, tools that fill the
    // context); the notice says why.
    bool refused();
    void saveDraft(bool now);
    int runRow() const; // row of the streaming answer in the open conversation, or -1
    // Adds what the model's reply parser released (thinking and answer apart, markers gone).
    void showReply(Run &run, const QString &reasoning, const QString &content);
    void onTokens(const QString &text, const GenerationStats &stats);
    void onReply(const waste::ReplyDelta &delta);
    void finish(const GenerationResult *result, const QString &error);

    EngineController *m_engine;
    ConversationSession *m_session;
    ChatContextMeter *m_meter;
    ToolLoop *m_tools;
    std::optional<Run> m_run;
};
