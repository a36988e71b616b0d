#include "chat/chatcontroller.h"

#include "chat/modeltie.h"
#include "chat/specialmarkers.h"
#include "engine/enginecontroller.h"
#include "settings/appsettings.h"

#include <QDateTime>

ChatController::ChatController(EngineController *engine, const QString &databasePath, QObject *parent)
    : QObject(parent),
      m_engine(engine),
      m_session(engine, databasePath),
      m_tools(&m_session),
      m_toolCost(engine, &m_session, &m_tools),
      m_meter(engine, &m_session, &m_tools, &m_toolCost),
      m_run(engine, &m_session, &m_meter, &m_tools)
{
    // The parts' own changes, said to QML as the page's.
    connect(&m_session, &ConversationSession::currentChanged, this, &ChatController::currentChanged);
    connect(&m_session, &ConversationSession::searchChanged, this, &ChatController::searchChanged);
    connect(&m_session, &ConversationSession::settingsChanged, this, &ChatController::settingsChanged);
    connect(&m_run, &ChatRun::generatingChanged, this, &ChatController::generatingChanged);
    connect(&m_run, &ChatRun::prefillProgressChanged, this, &ChatController::prefillProgressChanged);
    connect(&m_run, &ChatRun::answerSaved, this, &ChatController::answerSaved);
    connect(&m_run, &ChatRun::noticeRequested, this, &ChatController::setNotice);
    connect(&m_tools, &ToolLoop::toolChoiceChanged, this, &ChatController::toolChoiceChanged);
    connect(&m_tools, &ToolLoop::toolPendingChanged, this, &ChatController::toolPendingChanged);
    connect(&m_tools, &ToolLoop::readyToContinue, this, &ChatController::continueAfterTools);
    // The offered declarations are part of the prompt: the meter counts them.
    connect(&m_tools, &ToolLoop::offerChanged, &m_meter, &ChatContextMeter::recountSoon);
    // What the tools cost is counted again with every change of what the prompt declares.
    connect(&m_tools, &ToolLoop::offerChanged, &m_toolCost, &ToolCost::recountSoon);
    connect(&m_toolCost, &ToolCost::changed, this, &ChatController::toolServersChanged);
    connect(&m_session, &ConversationSession::settingsChanged, this, &ChatController::toolServersChanged);
    connect(&m_session, &ConversationSession::currentChanged, this, &ChatController::modelTieChanged);
    connect(m_engine, &EngineController::stateChanged, this, &ChatController::modelTieChanged);
    connect(&m_meter, &ChatContextMeter::contextChanged, this, &ChatController::contextChanged);
    connect(m_engine, &EngineController::modelChanged, this, [this] {
        // What the chat shows leaves the open model's special tokens out.
        m_session.messages()->setHiddenSpecials(m_engine->isRemote() ? QStringList()
                                                                      : containerSpecialTexts(m_engine->modelPath()));
        m_meter.recount();
        m_toolCost.recountSoon();
        Q_EMIT contextChanged();
        Q_EMIT modelTieChanged();
    });
}

ChatController::~ChatController()
{
    m_run.stop();
}

void ChatController::setNotice(const QString &text)
{
    if (text == m_notice)
        return;
    m_notice = text;
    Q_EMIT noticeChanged();
}

// ---- conversations ----

void ChatController::newConversation()
{
    m_session.clear();
    Q_EMIT toolPendingChanged();
    m_attachments.clear();
    m_meter.clearDraft();
    setNotice({});
    Q_EMIT attachmentsChanged();
    Q_EMIT currentChanged();
    Q_EMIT settingsChanged();
    Q_EMIT modelTieChanged();
    m_meter.recount();
    m_toolCost.recountSoon();
}

void ChatController::openConversation(qint64 id)
{
    // An answer still arriving for this conversation is shown live.
    if (!m_session.open(id, m_run.messageFor(id)))
        return;
    setNotice({});
    Q_EMIT toolPendingChanged();
    Q_EMIT currentChanged();
    Q_EMIT settingsChanged();
    Q_EMIT modelTieChanged();
    m_meter.recount();
    m_toolCost.recountSoon();
}

void ChatController::renameConversation(qint64 id, const QString &title)
{
    m_session.rename(id, title);
}

void ChatController::deleteConversation(qint64 id)
{
    if (!m_session.store())
        return;
    m_run.abandon(id);
    m_session.remove(id);
    if (id == m_session.current().id)
        newConversation();
    m_session.refreshList();
}

// ---- settings (the open conversation's; they apply to the next answer) ----

void ChatController::setSystemPrompt(const QString &v)
{
    if (m_session.changeSetting(&ConversationSettings::systemPrompt, v)) {
        m_meter.recount();
        m_toolCost.recountSoon(); // the empty chat's prompt the tools are counted against
    }
}

void ChatController::setTemperature(double v) { m_session.setSampling(&ConversationSettings::temperature, v, 0.0, 2.0); }

void ChatController::setTopP(double v) { m_session.setSampling(&ConversationSettings::topP, v, 0.05, 1.0); }

void ChatController::setMaxTokens(int v)
{
    if (m_session.changeSetting(&ConversationSettings::maxTokens, qBound(16, v, 32768)))
        Q_EMIT contextChanged();
}

void ChatController::setThinking(bool v) { m_session.changeSetting(&ConversationSettings::thinking, v); }

void ChatController::setThinkingBudget(int v)
{
    m_session.changeSetting(&ConversationSettings::thinkingBudget, qBound(0, v, 32768));
}

// ---- sending ----

bool ChatController::send(const QString &text)
{
    const QString body = text.trimmed();
    if (m_run.active()) {
        setNotice(tr("Wait for the answer to finish, or press Esc to stop it."));
        return false;
    }
    if (body.isEmpty() && m_attachments.isEmpty())
        return false;
    if (toolPending()) {
        setNotice(tr("The answer waits for a tool call: run it or deny it first."));
        return false;
    }
    // Said before the message is stored: it stays in the composer until it can be answered.
    if (const QString why = modeltie::sendBlocked(m_session.current(), *m_engine); !why.isEmpty()) {
        setNotice(why);
        return false;
    }
    if (m_engine->state() != EngineController::Ready) {
        setNotice(m_engine->state() == EngineController::Loading
                      ? tr("The model is still loading; send again when the status bar says ready.")
                      : tr("No model is open. Open one on the Models page, then send again."));
        return false;
    }
    for (const QString &path : std::as_const(m_attachments))
        if (const QString problem = firstProblemForImage(path); !problem.isEmpty()) {
            setNotice(problem);
            return false;
        }
    if (m_meter.toolsFillContext()) {
        // The meter under the message box already says why and offers the ways out; the notice says only
        // that this message waits for one of them (the same paragraph twice reads as two problems).
        setNotice(tr("Not sent: the tools this chat offers fill its context. Choose fewer tools or a larger "
                     "context under the message box, then send again; your message stays in the box."));
        return false;
    }

    m_session.createIfNew(body);
    ChatMessage user;
    user.role = QStringLiteral("user");
    user.text = body;
    for (const QString &path : std::as_const(m_attachments))
        user.imagePaths << keepImage(path);
    user.created = QDateTime::currentDateTime();
    user.id = m_session.saveMessage(m_session.current().id, user);
    m_session.messages()->append(user);
    m_attachments.clear();
    m_meter.clearDraft();
    Q_EMIT attachmentsChanged();
    setNotice({});
    m_session.refreshList();
    // Counted now, ahead of the answer on the engine thread: while the answer is written the
    // meter shows this prompt, not the empty chat's count ("3 / 16,384 · the chat template's
    // own tokens") from before the message.
    m_meter.recount();
    return m_run.start();
}

void ChatController::continueAfterTools()
{
    if (m_run.active() || m_engine->state() != EngineController::Ready)
        return;
    m_run.start();
}

// ---- the ways out: a larger context, the conversation's own model ----

void ChatController::openWithLargerContext()
{
    const int tokens = m_meter.largerContext().tokens;
    const QString path = m_engine->modelPath();
    if (tokens <= 0 || path.isEmpty() || m_engine->isRemote())
        return;
    AppSettings *settings = AppSettings::instance();
    if (settings)
        settings->setContextTokens(tokens);
    m_engine->openModel(path, settings ? settings->budgetFor(path) : 0, tokens);
}

ChatController::ModelTie ChatController::modelTie() const
{
    switch (modeltie::of(m_session.current(), *m_engine)) {
    case modeltie::State::Same:
        return TiedHere;
    case modeltie::State::Other:
        return OtherModel;
    case modeltie::State::Gone:
        return ModelGone;
    }
    return TiedHere;
}

void ChatController::openTiedModel()
{
    const QString path = m_session.current().modelPath;
    if (path.isEmpty() || modelTie() != OtherModel)
        return;
    // As the Models page opens a model: the budget kept for it, the context kept for all.
    const AppSettings *settings = AppSettings::instance();
    m_engine->openModel(path, settings ? settings->budgetFor(path) : 0, settings ? settings->contextTokens() : 4096);
}

void ChatController::continueWithOpenModel()
{
    if (modelTie() == TiedHere || m_engine->modelPath().isEmpty())
        return;
    // The saved engine state is the other model's: it is not read again (savedstate.h checks
    // the model), and the history is read anew by this one.
    m_session.tieToOpenModel();
    setNotice({});
    Q_EMIT modelTieChanged();
}
