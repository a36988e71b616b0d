// ChatController: the Chat page's face to QML. It owns the parts that do the work and wires
// them together; what it holds itself is what is only the page's: the attachments (checked and
// copied in chatattachments.cpp), the notice line and sending a typed message.
//   ConversationSession  the conversations, the store, the open one and its settings
//   ChatRun              the answer being generated: request, streaming, saving, stop, regenerate
//   ToolLoop             the MCP tools offered, the calls an answer made, approvals, results
//   ToolCost             the tokens the offered tools take, per server
//   ChatContextMeter     the tokens the conversation takes, the read estimate
//   modeltie             whether the open conversation's own model is the one open
// Its properties, invokables and signals are the page's API (QML and the tests use them).
#pragma once

#include "chat/chatcontextmeter.h"
#include "chat/chatrun.h"
#include "chat/conversationlistmodel.h"
#include "chat/conversationsession.h"
#include "chat/messagemodel.h"
#include "chat/toolcost.h"
#include "chat/toolloop.h"
#include "singleton/appsingleton.h"

#include <QObject>
#include <QQmlEngine>
#include <QUrl>

class EngineController;
class McpHub;

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
    // The MCP servers with tools, as this chat offers them, with what each costs in tokens
    // (ToolCost): [{name, tools, offeredTools, offered, tokens (-1: not counted yet),
    // toolList: [{name, offered}]}].
    Q_PROPERTY(QVariantList toolServers READ toolServers NOTIFY toolServersChanged)
    // Tokens the tools this chat offers add to every prompt (0: none).
    Q_PROPERTY(int toolTokens READ toolTokens NOTIFY toolServersChanged)
    // The offered tools leave no room (contextWarning says so): the ways out are shown.
    Q_PROPERTY(bool toolsDoNotFit READ toolsDoNotFit NOTIFY contextChanged)
    // The context the "larger context" way out opens the model with (0: none is large enough).
    Q_PROPERTY(int largerContext READ largerContext NOTIFY contextChanged)
    // The open conversation and the open model (modeltie.h): the banner that offers to open
    // the conversation's own model, or says it is gone.
    Q_PROPERTY(ModelTie modelTie READ modelTie NOTIFY modelTieChanged)
    Q_PROPERTY(QString tiedModelName READ tiedModelName NOTIFY modelTieChanged)

public:
    enum ModelTie { TiedHere, OtherModel, ModelGone };
    Q_ENUM(ModelTie)

    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    ChatController(EngineController *engine, const QString &databasePath, QObject *parent);
    ~ChatController() override;

    ConversationListModel *conversations() { return m_session.list(); }
    MessageModel *messages() { return m_session.messages(); }
    qint64 currentId() const { return m_session.current().id; }
    QString currentTitle() const { return m_session.current().title; }
    QString search() const { return m_session.search(); }
    void setSearch(const QString &text) { m_session.setSearch(text); }
    bool generating() const { return m_run.active(); }
    bool prefilling() const { return m_run.prefilling(); }
    double prefillProgress() const { return m_run.prefillProgress(); }
    QString prefillText() const { return m_run.prefillText(); }
    QStringList attachments() const { return m_attachments; }
    QString imageFilePatterns() const;
    QString notice() const { return m_notice; }
    QString storeError() const { return m_session.storeError(); }

    QString systemPrompt() const { return m_session.settings().systemPrompt; }
    void setSystemPrompt(const QString &v);
    double temperature() const { return m_session.settings().temperature; }
    void setTemperature(double v);
    double topP() const { return m_session.settings().topP; }
    void setTopP(double v);
    int maxTokens() const { return m_session.settings().maxTokens; }
    void setMaxTokens(int v);
    bool thinking() const { return m_session.settings().thinking; }
    void setThinking(bool v);
    int thinkingBudget() const { return m_session.settings().thinkingBudget; }
    void setThinkingBudget(int v);

    int contextUsed() const { return m_meter.used(); }
    int contextLimit() const { return m_meter.limit(); }
    QString contextWarning() const { return m_meter.warning(); }
    QString contextNote() const { return m_meter.note(); }
    QString readEstimate() const { return m_meter.readEstimate(); }
    // The open model's predicted prompt reading rate, tokens per second (the Planner's
    // forecast.prefill at the budget in use); 0: not known.
    void setReadRate(double tokensPerSecond) { m_meter.setReadRate(tokensPerSecond); }

    Q_INVOKABLE void newConversation();
    Q_INVOKABLE void openConversation(qint64 id);
    Q_INVOKABLE void renameConversation(qint64 id, const QString &title);
    Q_INVOKABLE void deleteConversation(qint64 id);

    // Sends the text (and the attachments) as a user message and starts the answer.
    // Returns false with a notice when it cannot (no model, already answering, empty).
    Q_INVOKABLE bool send(const QString &text);
    Q_INVOKABLE void stop() { m_run.stop(); }
    // Where the engine state of a conversation is saved (empty without a store).
    QString stateFileFor(qint64 conversationId) const { return m_session.stateFileFor(conversationId); }

    // Answers the last user message again (drops the last answer).
    Q_INVOKABLE bool regenerate() { return m_run.regenerate(); }
    // Replaces the user message at `row`, drops everything after it, and answers again.
    Q_INVOKABLE bool editAndResend(int row, const QString &text) { return m_run.editAndResend(row, text); }

    // Attachments: local image files only. Refused with a notice when the file is not an
    // image or the open model has no vision tower. Returns how many were accepted.
    Q_INVOKABLE int addAttachments(const QList<QUrl> &urls);
    Q_INVOKABLE bool addAttachment(const QUrl &url);
    Q_INVOKABLE void removeAttachment(int index);
    Q_INVOKABLE void clearNotice() { setNotice({}); }
    // The composer's text, counted (debounced by the view) for the context meter.
    Q_INVOKABLE void setDraft(const QString &text) { m_meter.setDraft(text); }

    // The MCP servers whose tools the chat offers (none until set).
    void setToolHub(McpHub *hub) { m_tools.setHub(hub); }
    QString toolChoice() const { return m_tools.toolChoice(); }
    void setToolChoice(const QString &choice) { m_tools.setToolChoice(choice); }
    bool toolPending() const { return m_tools.pending(); }
    // The person's answer to the tool call shown at `row`: "once" runs it, "always" runs it
    // and every later call of the same tool without asking, "deny" tells the model it was
    // declined. Once no call of the answer is left open, the answer continues.
    Q_INVOKABLE bool answerToolCall(int row, const QString &decision) { return m_tools.answer(row, decision); }
    QVariantList toolServers() const { return m_toolCost.serversForQml(); }
    int toolTokens() const { return m_toolCost.offeredTokens(); }
    // Offers (or stops offering) a server's tools, or one tool, in this chat; saved with it.
    Q_INVOKABLE void setServerOffered(const QString &server, bool on) { m_tools.setServerOffered(server, on); }
    Q_INVOKABLE void setToolOffered(const QString &server, const QString &tool, bool on)
    {
        m_tools.setToolOffered(server, tool, on);
    }
    bool toolsDoNotFit() const { return !m_meter.toolsDoNotFit().isEmpty(); }
    int largerContext() const { return m_meter.largerContext().tokens; }
    // Opens the open model again with largerContext() positions, at the budget kept for it,
    // and keeps that context for later opens (as the Planner's Apply does).
    Q_INVOKABLE void openWithLargerContext();

    ModelTie modelTie() const;
    QString tiedModelName() const { return m_session.current().modelName; }
    // Opens the open conversation's own model, as the Models page opens a model.
    Q_INVOKABLE void openTiedModel();
    // The conversation goes on with the model open now (its own is gone, or the person says so).
    Q_INVOKABLE void continueWithOpenModel();

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
    void toolServersChanged();
    void modelTieChanged();
    // An answer ended (finished, stopped or failed) and was saved.
    void answerSaved(qint64 conversationId);

private:
    void setNotice(const QString &text);
    // The last answer's tool calls all have their outcome: the answer continues, unless one
    // is already running or the model is not ready (then the person sends or regenerates).
    void continueAfterTools();
    QString firstProblemForImage(const QString &path) const;
    // A copy of an attached image beside the database, so the conversation keeps working
    // (thumbnails, a prompt read again) when the original is moved or deleted.
    QString keepImage(const QString &path) const;

    EngineController *m_engine;
    // Declared in the order they are built: each part is given the ones before it.
    ConversationSession m_session;
    ToolLoop m_tools;
    ToolCost m_toolCost;
    ChatContextMeter m_meter;
    ChatRun m_run;
    QStringList m_attachments;
    QString m_notice;
};
