// ChatController: the chat page's logic. Owns the conversation store and the two list
// models, renders a conversation with the model's chat template (app/core/prompt) into a
// generation request for the EngineController and applies the streamed batches, read by the
// model's reply parser (thinking apart from the answer), to the message model on the GUI
// thread. Every message is written to the store when it is sent and when its answer ends
// (finished, stopped or failed). A generation keeps going (and is saved) when the user opens
// another conversation meanwhile. Sent images are copied beside
// the database (images/), removed with the last conversation that uses them. Each conversation's engine
// state is saved beside the database (states/conversation-ID.state), so reopening it
// continues without reading the whole history again; editing or regenerating drops it.
#pragma once

#include "chat/chatmessage.h"
#include "chat/conversationlistmodel.h"
#include "chat/conversationstore.h"
#include "prompt/dialogue.h"
#include "generation/generationtypes.h"
#include "engine/tokencount.h"
#include "chat/messagemodel.h"
#include "chat/prefillclock.h"
#include "singleton/appsingleton.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QTimer>
#include <QUrl>

#include <memory>
#include <optional>
#include <type_traits>

class EngineController;
class GenerationHandle;
class McpHub;
class McpReply;

class ChatController : public QObject, public AppSingleton<ChatController> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(ConversationListModel *conversations READ conversations CONSTANT)
    Q_PROPERTY(MessageModel *messages READ messages CONSTANT)
    Q_PROPERTY(qint64 currentId READ currentId NOTIFY currentChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
    Q_PROPERTY(QString search READ search WRITE setSearch NOTIFY searchChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(bool prefilling READ prefilling NOTIFY generatingChanged)
    Q_PROPERTY(double prefillProgress READ prefillProgress NOTIFY prefillProgressChanged)
    // "Reading your message — 43 %, about 2 min left" (PrefillClock) while the prompt is read.
    Q_PROPERTY(QString prefillText READ prefillText NOTIFY prefillProgressChanged)
    Q_PROPERTY(QStringList attachments READ attachments NOTIFY attachmentsChanged)
    Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
    // "*.png *.jpg *.webp …": what the attach dialog offers (every format Qt's plugins read).
    Q_PROPERTY(QString imageFilePatterns READ imageFilePatterns CONSTANT)
    Q_PROPERTY(QString storeError READ storeError CONSTANT)
    // Per-conversation settings (the drawer); they apply to the next answer.
    Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY settingsChanged)
    Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY settingsChanged)
    Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY settingsChanged)
    Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY settingsChanged)
    Q_PROPERTY(bool thinking READ thinking WRITE setThinking NOTIFY settingsChanged)
    // Most tokens of thinking before the model must answer; 0: no limit.
    Q_PROPERTY(int thinkingBudget READ thinkingBudget WRITE setThinkingBudget NOTIFY settingsChanged)
    // Context meter: tokens the conversation (and the draft) take, of the open context.
    Q_PROPERTY(int contextUsed READ contextUsed NOTIFY contextChanged)
    Q_PROPERTY(int contextLimit READ contextLimit NOTIFY contextChanged)
    Q_PROPERTY(QString contextWarning READ contextWarning NOTIFY contextChanged)
    // What the count is made of when nothing is typed yet (the template's own tokens, the
    // system prompt), so a count above zero on an empty chat explains itself; else "".
    Q_PROPERTY(QString contextNote READ contextNote NOTIFY contextChanged)
    // "Reading this takes about 3 min" when the next prompt's unread tokens (the draft, its
    // images, what the engine has not read of the conversation) would take over a minute at
    // the open model's predicted prompt reading rate (setReadRate); empty otherwise.
    Q_PROPERTY(QString readEstimate READ readEstimate NOTIFY contextChanged)
    // MCP tools (McpHub) offered to the model: "auto" (the model decides), "none" (not
    // offered), "required" (the answer to a message starts with a call of one of them) or a
    // tool's function name (the answer starts with a call of that one). A forced call goes
    // through constrained decoding; the answer after the results is free again.
    Q_PROPERTY(QString toolChoice READ toolChoice WRITE setToolChoice NOTIFY toolChoiceChanged)
    // A tool call of the open conversation awaits approval or runs: the answer waits for it.
    Q_PROPERTY(bool toolPending READ toolPending NOTIFY toolPendingChanged)

public:
    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    ChatController(EngineController *engine, const QString &databasePath, QObject *parent);
    ~ChatController() override;

    ConversationListModel *conversations() { return &m_conversations; }
    MessageModel *messages() { return &m_messages; }
    qint64 currentId() const { return m_current.id; }
    QString currentTitle() const { return m_current.title; }
    QString search() const { return m_search; }
    void setSearch(const QString &text);
    bool generating() const { return m_run.has_value(); }
    bool prefilling() const { return m_run && m_run->prefilling; }
    double prefillProgress() const { return m_run ? m_run->prefill.fraction() : 0; }
    QString prefillText() const { return m_run ? m_run->prefill.text() : QString(); }
    QStringList attachments() const { return m_attachments; }
    QString imageFilePatterns() const;
    QString notice() const { return m_notice; }
    QString storeError() const { return m_storeError; }

    QString systemPrompt() const { return m_settings.systemPrompt; }
    void setSystemPrompt(const QString &v);
    double temperature() const { return m_settings.temperature; }
    void setTemperature(double v);
    double topP() const { return m_settings.topP; }
    void setTopP(double v);
    int maxTokens() const { return m_settings.maxTokens; }
    void setMaxTokens(int v);
    bool thinking() const { return m_settings.thinking; }
    void setThinking(bool v);
    int thinkingBudget() const { return m_settings.thinkingBudget; }
    void setThinkingBudget(int v);

    int contextUsed() const { return m_contextUsed; }
    int contextLimit() const;
    QString contextWarning() const;
    QString contextNote() const;
    QString readEstimate() const;
    // The open model's predicted prompt reading rate, tokens per second (the Planner's
    // forecast.prefill at the budget in use); 0: not known.
    void setReadRate(double tokensPerSecond);

    Q_INVOKABLE void newConversation();
    Q_INVOKABLE void openConversation(qint64 id);
    Q_INVOKABLE void renameConversation(qint64 id, const QString &title);
    Q_INVOKABLE void deleteConversation(qint64 id);

    // Sends the text (and the attachments) as a user message and starts the answer.
    // Returns false with a notice when it cannot (no model, already answering, empty).
    Q_INVOKABLE bool send(const QString &text);
    Q_INVOKABLE void stop();
    // Where the engine state of a conversation is saved (empty without a store).
    QString stateFileFor(qint64 conversationId) const;

    // Answers the last user message again (drops the last answer).
    Q_INVOKABLE bool regenerate();
    // Replaces the user message at `row`, drops everything after it, and answers again.
    Q_INVOKABLE bool editAndResend(int row, const QString &text);

    // Attachments: local image files only. Refused with a notice when the file is not an
    // image or the open model has no vision tower. Returns how many were accepted.
    Q_INVOKABLE int addAttachments(const QList<QUrl> &urls);
    Q_INVOKABLE bool addAttachment(const QUrl &url);
    Q_INVOKABLE void removeAttachment(int index);
    Q_INVOKABLE void clearNotice();
    // The composer's text, counted (debounced by the view) for the context meter.
    Q_INVOKABLE void setDraft(const QString &text);

    // The MCP servers whose tools the chat offers (none until set).
    void setToolHub(McpHub *hub);
    QString toolChoice() const { return m_toolChoice; }
    void setToolChoice(const QString &choice);
    bool toolPending() const;
    // The person's answer to the tool call shown at `row`: "once" runs it, "always" runs it
    // and every later call of the same tool without asking, "deny" tells the model it was
    // declined. Once no call of the answer is left open, the answer continues.
    Q_INVOKABLE bool answerToolCall(int row, const QString &decision);

Q_SIGNALS:
    void currentChanged();
    void searchChanged();
    void generatingChanged();
    void prefillProgressChanged();
    void attachmentsChanged();
    void noticeChanged();
    void settingsChanged();
    void contextChanged();
    void toolChoiceChanged();
    void toolPendingChanged();
    // An answer ended (finished, stopped or failed) and was saved.
    void answerSaved(qint64 conversationId);

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
    void saveDraft(bool now);
    struct ToolRun {                 // a tool call in flight
        qint64 conversationId = 0;
        ChatMessage message;
    };

    void refreshList();
    void setNotice(const QString &text);
    void saveSettings();
    // One setting of the open conversation: stored and saved when it differs; true then.
    template <typename T>
    bool changeSetting(T ConversationSettings::*field, const std::type_identity_t<T> &v);
    // A sampling setting (temperature, top-p): clamped to [lo, hi], saved when it moved.
    void setSampling(double ConversationSettings::*field, double v, double lo, double hi);
    bool startAnswer();
    int runRow() const; // row of the streaming answer in the open conversation, or -1
    // Adds what the model's reply parser released (thinking and answer apart, markers gone).
    void showReply(Run &run, const QString &reasoning, const QString &content);
    // The open model's chat format (decided by the engine, EngineController::modelInfo()).
    waste::ChatFormat chatFormat() const;
    Dialogue dialogueFor(const QList<ChatMessage> &messages, int firstMessage) const;
    void finishRun(const GenerationResult *result, const QString &error);
    void recount();
    QString firstProblemForImage(const QString &path) const;
    // A copy of an attached image beside the database, so the conversation keeps working
    // (thumbnails, a prompt read again) when the original is moved or deleted.
    QString keepImage(const QString &path) const;
    QString imagesFolder() const;

    void onTokens(const QString &text, const GenerationStats &stats);
    void onReply(const waste::ReplyDelta &delta);
    void onCounted(int tokens);

    // Tools (MCP).
    QJsonArray offeredTools() const;
    // The calls a finished answer made (its reply parser was given the offered tools), each
    // with an id of its own.
    static QJsonArray takeToolCalls(const GenerationResult &result);
    // A tool message for each call of the answer just saved; runs the ones allowed always.
    void openToolCalls(qint64 conversationId, const QJsonArray &calls, bool shown);
    void runTool(int row);
    void settleTool(McpReply *reply);
    void updateToolMessage(qint64 conversationId, const ChatMessage &message);
    // Answers again once every call of the last answer has its outcome.
    void continueAfterTools();

    EngineController *m_engine;
    std::unique_ptr<ConversationStore> m_store;
    QString m_storeError;
    ConversationListModel m_conversations;
    MessageModel m_messages;
    Conversation m_current;
    ConversationSettings m_settings;
    QString m_search;
    QStringList m_attachments;
    QString m_notice;
    QString m_draft;
    std::optional<Run> m_run;
    McpHub *m_hub = nullptr;
    QString m_toolChoice = QStringLiteral("auto");
    QHash<McpReply *, ToolRun> m_toolRuns;
    QPointer<TokenCount> m_count; // the latest count; earlier ones are no longer listened to
    QTimer m_recountTimer; // draft edits: one count after typing pauses
    static constexpr int kDraftRecountMs = 150;
    int m_contextUsed = 0;
    double m_readRate = 0;
    QHash<qint64, int> m_readTokens; // per conversation: tokens its last answer left in the engine's state
    bool m_countingTemplateOnly = false; // the count on its way has no message and no draft
    bool m_contextTemplateOnly = false;  // so has the count shown
};
