#include "chat/chatrun.h"

#include "chat/chatcontextmeter.h"
#include "chat/chatdialogue.h"
#include "chat/contextcut.h"
#include "chat/conversationsession.h"
#include "chat/finishreasontext.h"
#include "chat/modeltie.h"
#include "chat/toolloop.h"
#include "engine/enginecontroller.h"
#include "prompt/dialoguerenderer.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRandomGenerator>

#include <waste/thinking_budget.hpp>

#include <exception>

ChatRun::ChatRun(EngineController *engine, ConversationSession *session, ChatContextMeter *meter, ToolLoop *tools,
                 QObject *parent)
    : QObject(parent), m_engine(engine), m_session(session), m_meter(meter), m_tools(tools)
{
}

const ChatMessage *ChatRun::messageFor(qint64 conversationId) const
{
    return m_run && m_run->conversationId == conversationId ? &m_run->message : nullptr;
}

bool ChatRun::start()
{
    MessageModel *messages = m_session->messages();
    const ConversationSettings &settings = m_session->settings();
    const QList<ChatMessage> history = messages->messages();
    // After a user's message, or after the results of the tool calls an answer made.
    if (history.isEmpty() || (history.last().role != QLatin1String("user") && history.last().role != QLatin1String("tool")))
        return false;
    if (refused())
        return false;
    if (m_session->current().modelPath.isEmpty()) // stored before conversations kept their model
        m_session->tieToOpenModel();

    const int firstMessage = firstMessageThatFits(history, m_meter->used(), settings.maxTokens, m_meter->limit());
    const waste::ChatFormat format = openChatFormat(*m_engine);
    Dialogue dialogue = chatDialogue(history, firstMessage, settings);
    const QJsonArray tools = m_tools->offeredTools();
    const QString toolChoice = m_tools->toolChoice();
    dialogue.tools = tools;
    // A forced call opens the answer to a person's message; after the results the model is free.
    const bool afterUser = history.last().role == QLatin1String("user");
    const bool forced = !tools.isEmpty() && afterUser && toolChoice != QLatin1String("auto");
    RenderedPrompt prompt;
    try {
        if (!m_engine->isRemote()) // a remote engine renders the chat itself (request.dialogue)
            prompt = renderDialogue(dialogue, format);
    } catch (const std::exception &e) {
        Q_EMIT noticeRequested(tr("The conversation cannot be sent: %1").arg(QString::fromStdString(e.what())));
        return false;
    }

    GenerationRequest request;
    request.segments = prompt.segments;
    request.reusableSegments = prompt.reusableSegments;
    request.imagePaths = prompt.imagePaths;
    request.stateFile = m_session->stateFileFor(m_session->current().id);
    request.params.temperature = float(settings.temperature);
    request.params.topP = float(settings.topP);
    request.params.maxTokens = settings.maxTokens;
    request.params.keepSpecialText = true; // the raw reply is kept to render the history token for token
    request.params.seed = QRandomGenerator::global()->generate64();
    request.parseReply = true;
    if (!tools.isEmpty())
        request.replyTools = QJsonDocument(tools).toJson(QJsonDocument::Compact);
    request.dialogue = dialogue;
    if (forced)
        request.dialogue.toolChoice = toolChoice;
    if (forced && !m_engine->isRemote()) {
        const std::string toolsJson = QJsonDocument(tools).toJson(QJsonDocument::Compact).toStdString();
        const std::string name = toolChoice == QLatin1String("required") ? std::string() : toolChoice.toStdString();
        request.makeConstraint = [toolsJson, name](const waste::Model &model, int maxTokens, std::span<const int32_t> p) {
            return waste::makeToolCallConstraint(model, toolsJson, name, maxTokens, p);
        };
    } else if (settings.thinking && settings.thinkingBudget > 0 && !m_engine->isRemote()) {
        // Null where this reply does not reason (the model's format, or a prompt without thinking).
        request.makeConstraint = [budget = settings.thinkingBudget](const waste::Model &model, int,
                                                                   std::span<const int32_t> p) {
            return waste::makeThinkingBudget(model, budget, p);
        };
    }

    Run run;
    run.conversationId = m_session->current().id;
    run.message.role = QStringLiteral("assistant");
    run.message.streaming = true;
    run.message.openedThinking = prompt.opensThinking;
    run.message.created = QDateTime::currentDateTime();
    run.tools = tools;
    run.clock.start();
    m_run = std::move(run);
    saveDraft(true);
    messages->append(m_run->message);
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
    connect(handle, &GenerationHandle::tokens, this, &ChatRun::onTokens);
    connect(handle, &GenerationHandle::reply, this, &ChatRun::onReply);
    connect(handle, &GenerationHandle::finished, this, [this](const GenerationResult &result) {
        finish(&result, {});
    });
    connect(handle, &GenerationHandle::failed, this, [this](const GenerationError &error) {
        // A prompt too long for the context because of the tools: the answer's error says so.
        const QString tools = error.code == waste::ErrorCode::ContextFull && !m_run->tools.isEmpty()
                                  ? m_meter->toolsDoNotFit()
                                  : QString();
        finish(nullptr, tools.isEmpty() ? error.message : error.message + QStringLiteral(". ") + tools);
    });
    if (firstMessage > 0)
        Q_EMIT noticeRequested(firstMessage == 1
                      ? tr("The oldest message no longer fits the context and was left out of this answer.")
                      : tr("The oldest %1 messages no longer fit the context and were left out of this answer.").arg(firstMessage));
    Q_EMIT generatingChanged();
    return true;
}

bool ChatRun::refused()
{
    // An answer comes only from the conversation's own model (modeltie.h), and only when the
    // offered tools leave the prompt room; else the notice says why and what to do.
    QString why = modeltie::sendBlocked(m_session->current(), *m_engine);
    if (why.isEmpty() && m_meter->toolsFillContext())
        why = m_meter->toolsDoNotFit();
    if (why.isEmpty())
        return false;
    Q_EMIT noticeRequested(why);
    return true;
}

void ChatRun::saveDraft(bool now)
{
    if (!m_session->store() || !m_run || m_run->conversationId == 0)
        return;
    if (!now && m_run->sinceSaved.isValid() && m_run->sinceSaved.elapsed() < kDraftSaveMs)
        return;
    ChatMessage draft = m_run->message;
    draft.streaming = false;
    draft.finishReason = QString::fromLatin1(kInterrupted); // what a reopened chat says if this is the last write
    m_run->message.id = m_session->saveMessage(m_run->conversationId, draft);
    m_run->sinceSaved.start();
}

int ChatRun::runRow() const
{
    if (!m_run || m_run->conversationId != m_session->current().id)
        return -1;
    const MessageModel *messages = m_session->messages();
    const int last = messages->rowCount() - 1;
    return last >= 0 && messages->at(last).streaming ? last : -1;
}

void ChatRun::showReply(Run &run, const QString &reasoning, const QString &content)
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

void ChatRun::onTokens(const QString &text, const GenerationStats &stats)
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
        m_session->messages()->replace(row, m_run->message);
}

void ChatRun::onReply(const waste::ReplyDelta &delta)
{
    m_run->replyEnded = m_run->replyEnded || delta.done;
    showReply(*m_run, QString::fromStdString(delta.reasoning), QString::fromStdString(delta.content));
    saveDraft(false);
    if (const int row = runRow(); row >= 0)
        m_session->messages()->replace(row, m_run->message);
}

void ChatRun::finish(const GenerationResult *result, const QString &error)
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
        m_meter->setReadTokens(run.conversationId, result->stats.promptTokens + result->stats.completionTokens);
        run.message.tokens = result->stats.completionTokens;
        run.message.tokensPerSecond = result->stats.tokensPerSecond;
        run.message.hitRate = result->stats.hitRate;
        if (!run.tools.isEmpty()) {
            const QJsonArray calls = ToolLoop::takeToolCalls(*result);
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
    if (m_session->store() && run.conversationId != 0)
        run.message.id = m_session->saveMessage(run.conversationId, run.message);
    if (row >= 0)
        m_session->messages()->replace(row, run.message);
    const qint64 conversation = run.conversationId;
    const QJsonArray calls = run.message.toolCalls();
    const bool shown = row >= 0;
    m_run.reset();
    Q_EMIT generatingChanged();
    m_session->refreshList();
    m_meter->recount();
    if (conversation != 0)
        Q_EMIT answerSaved(conversation);
    // The calls wait in the conversation they belong to: opened elsewhere meanwhile, they
    // are saved awaiting approval and asked when it is opened again.
    if (!calls.isEmpty())
        m_tools->openToolCalls(conversation, calls, shown);
}

void ChatRun::stop()
{
    if (m_run)
        m_run->handle->cancel();
}

void ChatRun::abandon(qint64 conversationId)
{
    if (!m_run || m_run->conversationId != conversationId)
        return;
    m_run->handle->cancel();
    m_run->conversationId = 0; // nothing left to save it into
}

bool ChatRun::regenerate()
{
    // Refused before the answer it replaces is dropped.
    if (m_run || m_engine->state() != EngineController::Ready || refused())
        return false;
    MessageModel *messages = m_session->messages();
    int last = messages->rowCount() - 1;
    if (last >= 0 && messages->at(last).role == QLatin1String("assistant")) {
        if (messages->at(last).id != 0)
            m_session->deleteMessage(messages->at(last).id);
        messages->truncate(last);
    }
    // The saved state holds the dropped answer: it cannot be continued from.
    m_engine->forgetState(m_session->stateFileFor(m_session->current().id));
    return start();
}

bool ChatRun::editAndResend(int row, const QString &text)
{
    MessageModel *messages = m_session->messages();
    if (m_run || row < 0 || row >= messages->rowCount() || messages->at(row).role != QLatin1String("user"))
        return false;
    if (m_engine->state() != EngineController::Ready) {
        Q_EMIT noticeRequested(tr("No model is open. Open one on the Models page, then send again."));
        return false;
    }
    if (refused()) // before anything after the edited message is dropped
        return false;
    ChatMessage edited = messages->at(row);
    for (int i = messages->rowCount() - 1; i > row; --i)
        if (messages->at(i).id != 0)
            m_session->deleteMessage(messages->at(i).id);
    messages->truncate(row + 1);
    edited.text = text.trimmed();
    if (m_session->store())
        edited.id = m_session->saveMessage(m_session->current().id, edited);
    messages->replace(row, edited);
    m_engine->forgetState(m_session->stateFileFor(m_session->current().id));
    return start();
}
