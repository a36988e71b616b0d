#include "chat/chatcontroller.h"

#include "chat/contextcut.h"
#include "chat/finishreasontext.h"
#include "chat/specialmarkers.h"
#include "prompt/dialoguerenderer.h"
#include "engine/enginecontroller.h"
#include "mcp/mcphub.h"
#include "mcp/mcpreply.h"
#include "mcp/mcptool.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSet>

#include <waste/thinking_budget.hpp>

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
        // What the chat shows leaves the open model's special tokens out.
        m_messages.setHiddenSpecials(m_engine->isRemote() ? QStringList() : containerSpecialTexts(m_engine->modelPath()));
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
    Q_EMIT toolPendingChanged();
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
    Q_EMIT toolPendingChanged();
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

template <typename T>
bool ChatController::changeSetting(T ConversationSettings::*field, const std::type_identity_t<T> &v)
{
    if (v == m_settings.*field)
        return false;
    m_settings.*field = v;
    saveSettings();
    return true;
}

void ChatController::setSystemPrompt(const QString &v)
{
    if (changeSetting(&ConversationSettings::systemPrompt, v))
        recount();
}

void ChatController::setTemperature(double v) { setSampling(&ConversationSettings::temperature, v, 0.0, 2.0); }

void ChatController::setTopP(double v) { setSampling(&ConversationSettings::topP, v, 0.05, 1.0); }

void ChatController::setSampling(double ConversationSettings::*field, double v, double lo, double hi)
{
    v = qBound(lo, v, hi);
    // +1: qFuzzyCompare is relative, and a setting may be 0.
    if (qFuzzyCompare(v + 1, m_settings.*field + 1))
        return;
    m_settings.*field = v;
    saveSettings();
}

void ChatController::setMaxTokens(int v)
{
    if (changeSetting(&ConversationSettings::maxTokens, qBound(16, v, 32768)))
        Q_EMIT contextChanged();
}

void ChatController::setThinking(bool v) { changeSetting(&ConversationSettings::thinking, v); }

void ChatController::setThinkingBudget(int v) { changeSetting(&ConversationSettings::thinkingBudget, qBound(0, v, 32768)); }

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
    if (toolPending()) {
        setNotice(tr("The answer waits for a tool call: run it or deny it first."));
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
        if (m.role == QLatin1String("tool")) {
            t.text = m.text;
            t.toolCallId = m.tool.value(QLatin1String("id")).toString();
            t.toolName = m.tool.value(QLatin1String("name")).toString();
            d.turns << t;
            continue;
        }
        if (m.role == QLatin1String("assistant")) {
            for (const QJsonValue &v : m.toolCalls()) {
                const QJsonObject c = v.toObject();
                t.toolCalls.append(QJsonObject{
                    {QStringLiteral("id"), c.value(QLatin1String("id"))},
                    {QStringLiteral("type"), QStringLiteral("function")},
                    {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), c.value(QLatin1String("name"))},
                                                             {QStringLiteral("arguments"), c.value(QLatin1String("arguments"))}}}});
            }
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
    // After a user's message, or after the results of the tool calls an answer made.
    if (history.isEmpty() || (history.last().role != QLatin1String("user") && history.last().role != QLatin1String("tool")))
        return false;

    const int firstMessage = firstMessageThatFits(history, m_contextUsed, m_settings.maxTokens, contextLimit());
    const waste::ChatFormat format = chatFormat();
    Dialogue dialogue = dialogueFor(history, firstMessage);
    const QJsonArray tools = offeredTools();
    dialogue.tools = tools;
    // A forced call opens the answer to a person's message; after the results the model is free.
    const bool afterUser = history.last().role == QLatin1String("user");
    const bool forced = !tools.isEmpty() && afterUser && m_toolChoice != QLatin1String("auto");
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
    request.reusableSegments = prompt.reusableSegments;
    request.imagePaths = prompt.imagePaths;
    request.stateFile = stateFileFor(m_current.id);
    request.params.temperature = float(m_settings.temperature);
    request.params.topP = float(m_settings.topP);
    request.params.maxTokens = m_settings.maxTokens;
    request.params.keepSpecialText = true; // the raw reply is kept to render the history token for token
    request.params.seed = QRandomGenerator::global()->generate64();
    request.parseReply = true;
    if (!tools.isEmpty())
        request.replyTools = QJsonDocument(tools).toJson(QJsonDocument::Compact);
    request.dialogue = dialogue;
    if (forced)
        request.dialogue.toolChoice = m_toolChoice;
    if (forced && !m_engine->isRemote()) {
        const std::string toolsJson = QJsonDocument(tools).toJson(QJsonDocument::Compact).toStdString();
        const std::string name = m_toolChoice == QLatin1String("required") ? std::string() : m_toolChoice.toStdString();
        request.makeConstraint = [toolsJson, name](const waste::Model &model, int maxTokens, std::span<const int32_t> p) {
            return waste::makeToolCallConstraint(model, toolsJson, name, maxTokens, p);
        };
    } else if (m_settings.thinking && m_settings.thinkingBudget > 0 && !m_engine->isRemote()) {
        // Null where this reply does not reason (the model's format, or a prompt without thinking).
        request.makeConstraint = [budget = m_settings.thinkingBudget](const waste::Model &model, int,
                                                                     std::span<const int32_t> p) {
            return waste::makeThinkingBudget(model, budget, p);
        };
    }

    Run run;
    run.conversationId = m_current.id;
    run.message.role = QStringLiteral("assistant");
    run.message.streaming = true;
    run.message.openedThinking = prompt.opensThinking;
    run.message.created = QDateTime::currentDateTime();
    run.tools = tools;
    run.clock.start();
    m_run = std::move(run);
    saveDraft(true);
    m_messages.append(m_run->message);
    GenerationHandle *handle = m_engine->generate(request);
    m_run->handle = handle;
    connect(handle, &GenerationHandle::started, this, [this] {
        m_run->prefill.reset();
        Q_EMIT prefillProgressChanged();
    });
    connect(handle, &GenerationHandle::prefillProgress, this, [this](int done, int total) {
        if (total > 0) {
            m_run->prefill.report(done, total, m_run->clock.elapsed() / 1000.0);
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

void ChatController::saveDraft(bool now)
{
    if (!m_store || !m_run || m_run->conversationId == 0)
        return;
    if (!now && m_run->sinceSaved.isValid() && m_run->sinceSaved.elapsed() < kDraftSaveMs)
        return;
    ChatMessage draft = m_run->message;
    draft.streaming = false;
    draft.finishReason = QString::fromLatin1(kInterrupted); // what a reopened chat says if this is the last write
    m_run->message.id = m_store->saveMessage(m_run->conversationId, draft);
    m_run->sinceSaved.start();
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
    saveDraft(false);
    if (const int row = runRow(); row >= 0)
        m_messages.replace(row, m_run->message);
}

void ChatController::onReply(const waste::ReplyDelta &delta)
{
    m_run->replyEnded = m_run->replyEnded || delta.done;
    showReply(*m_run, QString::fromStdString(delta.reasoning), QString::fromStdString(delta.content));
    saveDraft(false);
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
        m_readTokens[run.conversationId] = result->stats.promptTokens + result->stats.completionTokens;
        run.message.tokens = result->stats.completionTokens;
        run.message.tokensPerSecond = result->stats.tokensPerSecond;
        run.message.hitRate = result->stats.hitRate;
        if (!run.tools.isEmpty()) {
            const QJsonArray calls = takeToolCalls(*result);
            if (!calls.isEmpty())
                run.message.tool = QJsonObject{{QStringLiteral("calls"), calls}};
        }
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
    const QJsonArray calls = run.message.toolCalls();
    const bool shown = row >= 0;
    m_run.reset();
    Q_EMIT generatingChanged();
    refreshList();
    recount();
    if (conversation != 0)
        Q_EMIT answerSaved(conversation);
    // The calls wait in the conversation they belong to: opened elsewhere meanwhile, they
    // are saved awaiting approval and asked when it is opened again.
    if (!calls.isEmpty())
        openToolCalls(conversation, calls, shown);
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

// ---- tools (MCP) ----

void ChatController::setToolHub(McpHub *hub)
{
    if (m_hub)
        m_hub->disconnect(this);
    m_hub = hub;
    // The offered declarations are part of the prompt: the meter counts them (recount()).
    if (m_hub)
        connect(m_hub, &McpHub::toolsChanged, this, [this] { m_recountTimer.start(); });
    m_recountTimer.start();
}

void ChatController::setToolChoice(const QString &choice)
{
    const QString c = choice.trimmed().isEmpty() ? QStringLiteral("auto") : choice.trimmed();
    if (c == m_toolChoice)
        return;
    m_toolChoice = c;
    Q_EMIT toolChoiceChanged();
    m_recountTimer.start(); // "none" offers no declarations, the others all of them
}

bool ChatController::toolPending() const
{
    for (const ChatMessage &m : m_messages.messages())
        if (m.toolOpen())
            return true;
    return false;
}

QJsonArray ChatController::offeredTools() const
{
    // Offered in the model's own tool format (the engine's renderer declares them; a remote
    // engine's server renders its chat, tools included, itself).
    if (!m_hub || m_toolChoice == QLatin1String("none"))
        return {};
    const QJsonArray all = m_hub->toolSet().openAiTools();
    if (m_toolChoice == QLatin1String("auto") || m_toolChoice == QLatin1String("required"))
        return all;
    // A named tool: offered only when it is there (else the answer is free, not forced).
    for (const QJsonValue &t : all)
        if (t.toObject().value(QLatin1String("function")).toObject().value(QLatin1String("name")).toString() == m_toolChoice)
            return all;
    return {};
}

QJsonArray ChatController::takeToolCalls(const GenerationResult &result)
{
    // The reply parser was given the offered tools (GenerationRequest::replyTools): what it
    // returns as calls are calls of those, in whatever layout the model wrote them.
    QJsonArray out;
    for (const waste::ReplyToolCall &c : result.reply.toolCalls) {
        // Ids only tie a result to its call within this conversation.
        const QString id = QStringLiteral("call_%1").arg(QRandomGenerator::global()->generate64() & 0xffffffffffffULL, 12, 16, QLatin1Char('0'));
        out.append(QJsonObject{{QStringLiteral("id"), id},
                               {QStringLiteral("name"), QString::fromStdString(c.name)},
                               {QStringLiteral("arguments"), QString::fromStdString(c.arguments)}});
    }
    return out;
}

void ChatController::openToolCalls(qint64 conversationId, const QJsonArray &calls, bool shown)
{
    QList<int> toRun;
    for (const QJsonValue &v : calls) {
        const QJsonObject c = v.toObject();
        const QString name = c.value(QLatin1String("name")).toString();
        ChatMessage m;
        m.role = QStringLiteral("tool");
        m.created = QDateTime::currentDateTime();
        QJsonObject tool{{QStringLiteral("id"), c.value(QLatin1String("id"))},
                         {QStringLiteral("name"), name},
                         {QStringLiteral("arguments"), c.value(QLatin1String("arguments"))},
                         {QStringLiteral("status"), QStringLiteral("awaiting")}};
        const McpToolSet::Entry *entry = m_hub ? m_hub->toolSet().resolve(name) : nullptr;
        if (entry) {
            tool.insert(QStringLiteral("server"), entry->server);
            tool.insert(QStringLiteral("tool"), entry->tool.name);
        }
        m.tool = tool;
        if (m_store && conversationId != 0)
            m.id = m_store->saveMessage(conversationId, m);
        if (!shown)
            continue;
        m_messages.append(m);
        if (entry && m_hub->alwaysAllowed(entry->server, entry->tool.name))
            toRun << m_messages.rowCount() - 1;
    }
    if (!shown)
        return;
    Q_EMIT toolPendingChanged();
    for (const int row : std::as_const(toRun))
        runTool(row);
}

bool ChatController::answerToolCall(int row, const QString &decision)
{
    if (row < 0 || row >= m_messages.rowCount())
        return false;
    ChatMessage m = m_messages.at(row);
    if (m.role != QLatin1String("tool") || m.toolStatus() != QLatin1String("awaiting"))
        return false;
    if (decision == QLatin1String("deny")) {
        m.tool.insert(QStringLiteral("status"), QStringLiteral("denied"));
        m.text = tr("The person declined to run this tool.");
        updateToolMessage(m_current.id, m);
        continueAfterTools();
        return true;
    }
    if (decision != QLatin1String("once") && decision != QLatin1String("always"))
        return false;
    if (decision == QLatin1String("always") && m_hub) {
        const QString server = m.tool.value(QLatin1String("server")).toString();
        const QString tool = m.tool.value(QLatin1String("tool")).toString();
        if (!server.isEmpty())
            m_hub->allowAlways(server, tool);
    }
    runTool(row);
    return true;
}

void ChatController::runTool(int row)
{
    ChatMessage m = m_messages.at(row);
    const QString name = m.tool.value(QLatin1String("name")).toString();
    const QString argumentsText = m.tool.value(QLatin1String("arguments")).toString();
    QJsonParseError parseError{};
    const QJsonDocument arguments = QJsonDocument::fromJson(argumentsText.toUtf8(), &parseError);
    QString error;
    McpReply *reply = nullptr;
    if (!arguments.isObject() && !argumentsText.trimmed().isEmpty())
        error = tr("the model's arguments are not a JSON object (%1)").arg(parseError.errorString());
    else if (!m_hub)
        error = tr("no MCP server is set up");
    else
        reply = m_hub->call(name, arguments.object(), &error);
    if (!reply) {
        m.tool.insert(QStringLiteral("status"), QStringLiteral("failed"));
        m.error = error;
        m.text = tr("The tool could not run: %1.").arg(error);
        updateToolMessage(m_current.id, m);
        continueAfterTools();
        return;
    }
    m.tool.insert(QStringLiteral("status"), QStringLiteral("running"));
    updateToolMessage(m_current.id, m);
    m_toolRuns.insert(reply, ToolRun{m_current.id, m});
    connect(reply, &McpReply::finished, this, [this, reply] { settleTool(reply); });
}

void ChatController::settleTool(McpReply *reply)
{
    reply->deleteLater();
    const auto it = m_toolRuns.constFind(reply);
    if (it == m_toolRuns.cend())
        return;
    const ToolRun run = *it;
    m_toolRuns.erase(it);
    ChatMessage m = run.message;
    if (reply->error() == McpReply::Error::None) {
        const McpToolResult result = McpToolResult::fromResult(reply->result());
        m.tool.insert(QStringLiteral("status"), QStringLiteral("done"));
        m.tool.insert(QStringLiteral("isError"), result.isError);
        m.text = result.text();
        if (m.text.isEmpty() && !result.content.isEmpty())
            m.text = result.content.size() == 1 ? tr("(the tool answered with one block that is not text)")
                                                : tr("(the tool answered with %1 blocks that are not text)").arg(result.content.size());
    } else {
        // A failure, a time limit, a server gone: said in the card, and told to the model.
        m.tool.insert(QStringLiteral("status"), QStringLiteral("failed"));
        m.error = reply->errorString();
        m.text = tr("The tool could not run: %1.").arg(reply->errorString());
    }
    updateToolMessage(run.conversationId, m);
    if (run.conversationId == m_current.id)
        continueAfterTools();
}

void ChatController::updateToolMessage(qint64 conversationId, const ChatMessage &message)
{
    if (m_store && conversationId != 0 && message.id != 0)
        m_store->saveMessage(conversationId, message);
    if (conversationId != m_current.id)
        return;
    for (int row = 0; row < m_messages.rowCount(); ++row) {
        const ChatMessage &shown = m_messages.at(row);
        if (message.id != 0 ? shown.id == message.id
                            : shown.role == QLatin1String("tool") && shown.tool.value(QLatin1String("id")) == message.tool.value(QLatin1String("id"))) {
            m_messages.replace(row, message);
            break;
        }
    }
    Q_EMIT toolPendingChanged();
}

void ChatController::continueAfterTools()
{
    if (m_run || toolPending() || m_engine->state() != EngineController::Ready)
        return;
    const QList<ChatMessage> &list = m_messages.messages();
    if (list.isEmpty() || list.last().role != QLatin1String("tool"))
        return;
    startAnswer();
}
