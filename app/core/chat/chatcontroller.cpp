#include "chat/chatcontroller.h"

#include "chat/contextcut.h"
#include "chat/finishreasontext.h"
#include "prompt/dialoguerenderer.h"
#include "engine/enginecontroller.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>

#include <exception>

namespace {

QString titleFrom(const QString &text)
{
    QString t = text.simplified();
    if (t.size() > 48) {
        t.truncate(47);
        const qsizetype space = t.lastIndexOf(QLatin1Char(' '));
        if (space > 24)
            t.truncate(space);
        t += QChar(0x2026);
    }
    return t.isEmpty() ? QObject::tr("New chat") : t;
}

} // namespace

ChatController::ChatController(EngineController *engine, const QString &databasePath, QObject *parent)
    : QObject(parent), m_engine(engine)
{
    try {
        m_store = std::make_unique<ConversationStore>(databasePath);
    } catch (const std::exception &e) {
        // The chat still works for this session; the page says why nothing is kept.
        m_storeError = QString::fromStdString(e.what());
    }
    m_recountTimer.setSingleShot(true);
    m_recountTimer.setInterval(kDraftRecountMs);
    connect(&m_recountTimer, &QTimer::timeout, this, &ChatController::recount);
    connect(m_engine, &EngineController::modelChanged, this, [this] {
        recount();
        Q_EMIT contextChanged();
    });
    refreshList();
}

ChatController::~ChatController()
{
    if (m_run)
        m_run->handle->cancel();
}

void ChatController::refreshList()
{
    m_conversations.setConversations(m_store ? m_store->conversations(m_search) : QList<Conversation>{});
}

void ChatController::setSearch(const QString &text)
{
    if (text == m_search)
        return;
    m_search = text;
    refreshList();
    Q_EMIT searchChanged();
}

void ChatController::setNotice(const QString &text)
{
    if (text == m_notice)
        return;
    m_notice = text;
    Q_EMIT noticeChanged();
}

void ChatController::clearNotice()
{
    setNotice({});
}

// ---- conversations ----

void ChatController::newConversation()
{
    m_current = Conversation{};
    m_settings = ConversationSettings{};
    m_messages.setMessages({});
    m_attachments.clear();
    m_draft.clear();
    setNotice({});
    Q_EMIT attachmentsChanged();
    Q_EMIT currentChanged();
    Q_EMIT settingsChanged();
    recount();
}

void ChatController::openConversation(qint64 id)
{
    if (!m_store || id == m_current.id)
        return;
    const Conversation c = m_store->conversation(id);
    if (c.id == 0)
        return;
    m_current = c;
    m_settings = c.settings;
    QList<ChatMessage> list = m_store->messages(id);
    // An answer still arriving for this conversation is shown live.
    if (m_run && m_run->conversationId == id)
        list << m_run->message;
    m_messages.setMessages(list);
    setNotice({});
    Q_EMIT currentChanged();
    Q_EMIT settingsChanged();
    recount();
}

void ChatController::renameConversation(qint64 id, const QString &title)
{
    const QString t = title.simplified();
    if (!m_store || t.isEmpty())
        return;
    m_store->renameConversation(id, t);
    if (id == m_current.id) {
        m_current.title = t;
        Q_EMIT currentChanged();
    }
    refreshList();
}

void ChatController::deleteConversation(qint64 id)
{
    if (!m_store)
        return;
    if (m_run && m_run->conversationId == id) {
        m_run->handle->cancel();
        m_run->conversationId = 0; // nothing left to save it into
    }
    QStringList images;
    for (const ChatMessage &m : m_store->messages(id))
        images << m.imagePaths;
    m_store->deleteConversation(id);
    m_engine->forgetState(stateFileFor(id));
    // Copies no other conversation uses go with it.
    const QString folder = QDir(imagesFolder()).absolutePath();
    for (const QString &image : std::as_const(images))
        if (QFileInfo(image).absolutePath() == folder && !m_store->imageInUse(image))
            QFile::remove(image);
    if (id == m_current.id)
        newConversation();
    refreshList();
}

// ---- settings ----

void ChatController::saveSettings()
{
    if (m_store && m_current.id != 0)
        m_store->setSettings(m_current.id, m_settings);
    Q_EMIT settingsChanged();
}

void ChatController::setSystemPrompt(const QString &v)
{
    if (v == m_settings.systemPrompt)
        return;
    m_settings.systemPrompt = v;
    saveSettings();
    recount();
}

void ChatController::setTemperature(double v)
{
    v = qBound(0.0, v, 2.0);
    if (qFuzzyCompare(v + 1, m_settings.temperature + 1))
        return;
    m_settings.temperature = v;
    saveSettings();
}

void ChatController::setTopP(double v)
{
    v = qBound(0.05, v, 1.0);
    if (qFuzzyCompare(v + 1, m_settings.topP + 1))
        return;
    m_settings.topP = v;
    saveSettings();
}

void ChatController::setMaxTokens(int v)
{
    v = qBound(16, v, 32768);
    if (v == m_settings.maxTokens)
        return;
    m_settings.maxTokens = v;
    saveSettings();
    Q_EMIT contextChanged();
}

void ChatController::setThinking(bool v)
{
    if (v == m_settings.thinking)
        return;
    m_settings.thinking = v;
    saveSettings();
}

// ---- sending and answering ----

bool ChatController::send(const QString &text)
{
    const QString body = text.trimmed();
    if (m_run) {
        setNotice(tr("Wait for the answer to finish, or press Esc to stop it."));
        return false;
    }
    if (body.isEmpty() && m_attachments.isEmpty())
        return false;
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

    if (m_current.id == 0) {
        if (m_store) {
            m_current = m_store->createConversation(titleFrom(body), m_settings);
        } else {
            m_current.title = titleFrom(body);
            m_current.created = QDateTime::currentDateTime();
        }
        Q_EMIT currentChanged();
    }
    ChatMessage user;
    user.role = QStringLiteral("user");
    user.text = body;
    for (const QString &path : std::as_const(m_attachments))
        user.imagePaths << keepImage(path);
    user.created = QDateTime::currentDateTime();
    if (m_store)
        user.id = m_store->saveMessage(m_current.id, user);
    m_messages.append(user);
    m_attachments.clear();
    m_draft.clear();
    Q_EMIT attachmentsChanged();
    setNotice({});
    refreshList();
    return startAnswer();
}

waste::ChatFormat ChatController::chatFormat() const
{
    return m_engine->modelInfo().value(QStringLiteral("chatFormat")).value<waste::ChatFormat>();
}

Dialogue ChatController::dialogueFor(const QList<ChatMessage> &messages, int firstMessage) const
{
    Dialogue d;
    d.systemPrompt = m_settings.systemPrompt.trimmed();
    d.thinking = m_settings.thinking;
    for (int i = qMax(0, firstMessage); i < messages.size(); ++i) {
        const ChatMessage &m = messages.at(i);
        if (m.streaming)
            continue;
        DialogueTurn t;
        t.role = m.role;
        if (m.role == QLatin1String("assistant")) {
            // A failed answer said nothing; the next question follows the last one.
            if (m.raw.isEmpty() && !m.error.isEmpty())
                continue;
            // The reply as the model wrote it, so the prompt repeats the engine state; answers
            // stored before replies were kept whole have only their visible text.
            t.text = m.raw.isEmpty() ? m.text : m.raw;
            t.reasoning = m.thinking;
            t.content = m.text;
            t.openedThinking = m.openedThinking;
        } else {
            t.text = m.text;
            t.imagePaths = m.imagePaths;
        }
        d.turns << t;
    }
    return d;
}

QString ChatController::stateFileFor(qint64 conversationId) const
{
    if (!m_store || conversationId == 0)
        return {};
    return QFileInfo(m_store->path()).absoluteDir().filePath(
        QStringLiteral("states/conversation-%1.state").arg(conversationId));
}

bool ChatController::startAnswer()
{
    const QList<ChatMessage> history = m_messages.messages();
    if (history.isEmpty() || history.last().role != QLatin1String("user"))
        return false;

    const int firstMessage = firstMessageThatFits(history, m_contextUsed, m_settings.maxTokens, contextLimit());
    const waste::ChatFormat format = chatFormat();
    const Dialogue dialogue = dialogueFor(history, firstMessage);
    RenderedPrompt prompt;
    try {
        if (!m_engine->isRemote()) // a remote engine renders the chat itself (request.dialogue)
            prompt = renderDialogue(dialogue, format);
    } catch (const std::exception &e) {
        setNotice(tr("The conversation cannot be sent: %1").arg(QString::fromStdString(e.what())));
        return false;
    }

    GenerationRequest request;
    request.segments = prompt.segments;
    request.imagePaths = prompt.imagePaths;
    request.stateFile = stateFileFor(m_current.id);
    request.params.temperature = float(m_settings.temperature);
    request.params.topP = float(m_settings.topP);
    request.params.maxTokens = m_settings.maxTokens;
    request.params.seed = QRandomGenerator::global()->generate64();
    request.parseReply = true;
    request.dialogue = dialogue;

    Run run;
    run.conversationId = m_current.id;
    run.message.role = QStringLiteral("assistant");
    run.message.streaming = true;
    run.message.openedThinking = prompt.opensThinking;
    run.message.created = QDateTime::currentDateTime();
    run.clock.start();
    m_run = std::move(run);
    m_messages.append(m_run->message);
    GenerationHandle *handle = m_engine->generate(request);
    m_run->handle = handle;
    connect(handle, &GenerationHandle::started, this, [this] {
        m_run->prefill = 0;
        Q_EMIT prefillProgressChanged();
    });
    connect(handle, &GenerationHandle::prefillProgress, this, [this](int done, int total) {
        if (total > 0) {
            m_run->prefill = double(done) / total;
            Q_EMIT prefillProgressChanged();
        }
    });
    connect(handle, &GenerationHandle::tokens, this, &ChatController::onTokens);
    connect(handle, &GenerationHandle::reply, this, &ChatController::onReply);
    connect(handle, &GenerationHandle::finished, this, [this](const GenerationResult &result) {
        finishRun(&result, {});
    });
    connect(handle, &GenerationHandle::failed, this, [this](const GenerationError &error) {
        finishRun(nullptr, error.message);
    });
    if (firstMessage > 0)
        setNotice(firstMessage == 1
                      ? tr("The oldest message no longer fits the context and was left out of this answer.")
                      : tr("The oldest %1 messages no longer fit the context and were left out of this answer.").arg(firstMessage));
    Q_EMIT generatingChanged();
    return true;
}

int ChatController::runRow() const
{
    if (!m_run || m_run->conversationId != m_current.id)
        return -1;
    const int last = m_messages.rowCount() - 1;
    return last >= 0 && m_messages.at(last).streaming ? last : -1;
}

void ChatController::showReply(Run &run, const QString &reasoning, const QString &content)
{
    // The message keeps the channels exactly as released (a K3 history repeats them); the
    // view shows them trimmed (MessageModel).
    run.message.thinking += reasoning;
    run.message.text += content;
    run.message.raw = run.raw;
    // Thinking lasts from its first word (or a prompt that opened it) until the answer starts.
    const bool inThinking = !run.replyEnded && run.message.text.isEmpty()
                            && (run.message.openedThinking || !run.message.thinking.isEmpty());
    const double now = run.clock.elapsed() / 1000.0;
    if (inThinking || !run.message.thinking.isEmpty()) {
        if (run.thinkingStarted < 0)
            run.thinkingStarted = now;
        if (inThinking)
            run.message.thinkingSeconds = now - run.thinkingStarted;
    }
}

void ChatController::onTokens(const QString &text, const GenerationStats &stats)
{
    if (m_run->prefilling) {
        m_run->prefilling = false;
        Q_EMIT generatingChanged();
    }
    m_run->raw += text;
    showReply(*m_run, {}, {});
    m_run->message.tokens = stats.completionTokens;
    m_run->message.tokensPerSecond = stats.tokensPerSecond;
    m_run->message.hitRate = stats.hitRate;
    if (const int row = runRow(); row >= 0)
        m_messages.replace(row, m_run->message);
}

void ChatController::onReply(const waste::ReplyDelta &delta)
{
    m_run->replyEnded = m_run->replyEnded || delta.done;
    showReply(*m_run, QString::fromStdString(delta.reasoning), QString::fromStdString(delta.content));
    if (const int row = runRow(); row >= 0)
        m_messages.replace(row, m_run->message);
}

void ChatController::finishRun(const GenerationResult *result, const QString &error)
{
    Run &run = *m_run;
    if (result) {
        // The final reply is authoritative: shown once more from the start (a generation
        // cancelled before it began carries none: what streamed stays).
        run.replyEnded = true;
        if (!result->text.isEmpty() || run.raw.isEmpty()) {
            run.raw = result->text;
            run.message.thinking.clear();
            run.message.text.clear();
            showReply(run, QString::fromStdString(result->reply.reasoning), QString::fromStdString(result->reply.content));
        } else {
            showReply(run, {}, {});
        }
        run.message.finishReason = finishReasonText(result->finishReason);
        run.message.tokens = result->stats.completionTokens;
        run.message.tokensPerSecond = result->stats.tokensPerSecond;
        run.message.hitRate = result->stats.hitRate;
    } else {
        run.replyEnded = true;
        showReply(run, {}, {});
        run.message.error = error;
        run.message.finishReason = QStringLiteral("error");
    }
    run.message.streaming = false;
    const int row = runRow();
    if (m_store && run.conversationId != 0)
        run.message.id = m_store->saveMessage(run.conversationId, run.message);
    if (row >= 0)
        m_messages.replace(row, run.message);
    const qint64 conversation = run.conversationId;
    m_run.reset();
    Q_EMIT generatingChanged();
    refreshList();
    recount();
    if (conversation != 0)
        Q_EMIT answerSaved(conversation);
}

void ChatController::stop()
{
    if (m_run)
        m_run->handle->cancel();
}

bool ChatController::regenerate()
{
    if (m_run || m_engine->state() != EngineController::Ready)
        return false;
    int last = m_messages.rowCount() - 1;
    if (last >= 0 && m_messages.at(last).role == QLatin1String("assistant")) {
        if (m_store && m_messages.at(last).id != 0)
            m_store->deleteMessage(m_messages.at(last).id);
        m_messages.truncate(last);
    }
    // The saved state holds the dropped answer: it cannot be continued from.
    m_engine->forgetState(stateFileFor(m_current.id));
    return startAnswer();
}

bool ChatController::editAndResend(int row, const QString &text)
{
    if (m_run || row < 0 || row >= m_messages.rowCount() || m_messages.at(row).role != QLatin1String("user"))
        return false;
    if (m_engine->state() != EngineController::Ready) {
        setNotice(tr("No model is open. Open one on the Models page, then send again."));
        return false;
    }
    ChatMessage edited = m_messages.at(row);
    for (int i = m_messages.rowCount() - 1; i > row; --i)
        if (m_store && m_messages.at(i).id != 0)
            m_store->deleteMessage(m_messages.at(i).id);
    m_messages.truncate(row + 1);
    edited.text = text.trimmed();
    if (m_store)
        edited.id = m_store->saveMessage(m_current.id, edited);
    m_messages.replace(row, edited);
    m_engine->forgetState(stateFileFor(m_current.id));
    return startAnswer();
}
