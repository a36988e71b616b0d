// ChatController's context meter: how many tokens the conversation, the draft and the
// offered tool declarations take of the open context, counted on the engine thread once
// typing pauses.
#include "chat/chatcontroller.h"

#include "engine/enginecontroller.h"
#include "units/units.h"

#include <algorithm>
#include <cmath>

int ChatController::contextLimit() const
{
    return m_engine->state() == EngineController::NoModel || m_engine->modelName().isEmpty() ? 0
                                                                                              : m_engine->contextTokens();
}

QString ChatController::contextWarning() const
{
    const int limit = contextLimit();
    if (limit <= 0 || m_contextUsed <= 0)
        return {};
    if (m_contextUsed + m_settings.maxTokens <= limit)
        return {};
    return tr("%1 of %2 tokens used: with up to %3 more for the answer, the start of this conversation will be "
              "left out. Start a new chat to keep it all, or lower Max tokens.")
        .arg(m_contextUsed)
        .arg(limit)
        .arg(m_settings.maxTokens);
}

QString ChatController::contextNote() const
{
    if (!m_contextTemplateOnly || m_contextUsed <= 0)
        return {};
    return m_settings.systemPrompt.trimmed().isEmpty() ? tr("the chat template's own tokens, before anything is typed")
                                                       : tr("the chat template and the system prompt, before anything is typed");
}

QString ChatController::readEstimate() const
{
    if (m_readRate <= 0 || m_contextUsed <= 0 || m_contextTemplateOnly)
        return {};
    const int unread = std::max(0, m_contextUsed - m_readTokens.value(m_current.id));
    const double seconds = unread / m_readRate;
    if (seconds < 60)
        return {};
    return tr("reading this takes about %1").arg(Units::duration(qint64(std::lround(seconds))));
}

void ChatController::setReadRate(double tokensPerSecond)
{
    if (tokensPerSecond == m_readRate)
        return;
    m_readRate = std::max(0.0, tokensPerSecond);
    Q_EMIT contextChanged();
}

void ChatController::setDraft(const QString &text)
{
    if (text == m_draft)
        return;
    m_draft = text;
    // Typing changes the draft on every key: count once the typing pauses, not per key.
    m_recountTimer.start();
}

void ChatController::recount()
{
    m_recountTimer.stop();
    if (m_engine->state() != EngineController::Ready && m_engine->state() != EngineController::Generating) {
        if (m_contextUsed != 0) {
            m_contextUsed = 0;
            Q_EMIT contextChanged();
        }
        return;
    }
    QList<ChatMessage> list = m_messages.messages();
    if (!list.isEmpty() && list.last().streaming)
        list.removeLast();
    if (!m_draft.trimmed().isEmpty()) {
        ChatMessage draft;
        draft.role = QStringLiteral("user");
        draft.text = m_draft.trimmed();
        list << draft;
    }
    m_countingTemplateOnly = list.isEmpty();
    // Rendered and counted on the engine thread: rendering re-reads every turn and stats
    // every image, which grows with the conversation.
    if (m_count)
        m_count->disconnect(this);
    // The tool declarations offered with the next answer are rendered into its prompt too
    // (with MCP's server-everything about 4,000 tokens): counted as sent.
    Dialogue dialogue = dialogueFor(list, 0);
    dialogue.tools = offeredTools();
    m_count = m_engine->countDialogue(dialogue, chatFormat());
    connect(m_count, &TokenCount::counted, this, &ChatController::onCounted);
}

void ChatController::onCounted(int tokens)
{
    if (tokens < 0) // not renderable (an unreadable image): keep the last count
        return;
    m_contextUsed = tokens;
    m_contextTemplateOnly = m_countingTemplateOnly;
    Q_EMIT contextChanged();
}
