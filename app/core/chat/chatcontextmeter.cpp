#include "chat/chatcontextmeter.h"

#include "chat/chatdialogue.h"
#include "chat/conversationsession.h"
#include "chat/toolcost.h"
#include "chat/toolloop.h"
#include "engine/enginecontroller.h"
#include "units/units.h"

#include <QLocale>

#include <algorithm>
#include <cmath>

ChatContextMeter::ChatContextMeter(EngineController *engine, ConversationSession *session, ToolLoop *tools,
                                   ToolCost *cost, QObject *parent)
    : QObject(parent), m_engine(engine), m_session(session), m_tools(tools), m_cost(cost)
{
    connect(m_cost, &ToolCost::changed, this, &ChatContextMeter::contextChanged);
    m_recountTimer.setSingleShot(true);
    m_recountTimer.setInterval(kDraftRecountMs);
    connect(&m_recountTimer, &QTimer::timeout, this, &ChatContextMeter::recount);
}

int ChatContextMeter::limit() const
{
    return m_engine->state() == EngineController::NoModel || m_engine->modelName().isEmpty() ? 0
                                                                                              : m_engine->contextTokens();
}

QString ChatContextMeter::warning() const
{
    const int contextLimit = limit();
    const int maxTokens = m_session->settings().maxTokens;
    if (contextLimit <= 0 || m_used <= 0)
        return {};
    // Tools that leave no room: a new chat would not help, fewer tools or a larger context would.
    if (const QString tools = toolsDoNotFit(); !tools.isEmpty())
        return tools;
    if (m_used + maxTokens <= contextLimit)
        return {};
    return tr("%1 of %2 tokens used: with up to %3 more for the answer, the start of this conversation will be "
              "left out. Start a new chat to keep it all, or lower Max tokens.")
        .arg(m_used)
        .arg(contextLimit)
        .arg(maxTokens);
}

QString ChatContextMeter::note() const
{
    if (m_used <= 0)
        return {};
    const bool system = !m_session->settings().systemPrompt.trimmed().isEmpty();
    // The tools are said apart, with each server's share: on an empty chat they are most of it.
    if (const int tools = m_cost->offeredTokens(); tools > 0) {
        const QString toolsPart = tr("%1 of them the tools this chat offers (%2)")
                                      .arg(QLocale().toString(tools), m_cost->offeredBreakdown());
        if (!m_templateOnly)
            return toolsPart;
        return system ? tr("%1, the rest the chat template and the system prompt").arg(toolsPart)
                      : tr("%1, the rest the chat template's own").arg(toolsPart);
    }
    if (!m_templateOnly)
        return {};
    return system ? tr("the chat template and the system prompt, before anything is typed")
                  : tr("the chat template's own tokens, before anything is typed");
}

ContextGrowth ChatContextMeter::largerContext() const
{
    const int maxTokens = m_session->settings().maxTokens;
    // Room for the answer and as much again for the conversation, after the tools.
    const int needed = m_cost->baseTokens() + 2 * maxTokens;
    const QString key = QStringLiteral("%1|%2|%3").arg(m_engine->modelPath()).arg(limit()).arg(needed);
    if (key != m_growthKey) {
        m_growthKey = key;
        m_growth = contextGrowthFor(m_engine->modelPath(), limit(), needed);
    }
    return m_growth;
}

QString ChatContextMeter::toolsDoNotFit() const
{
    const int contextLimit = limit();
    const int tools = m_cost->offeredTokens();
    const int maxTokens = m_session->settings().maxTokens;
    if (contextLimit <= 0 || tools <= 0 || m_cost->baseTokens() + maxTokens <= contextLimit)
        return {};
    const QLocale locale;
    QString text = tr("The tools this chat offers take %1 tokens (%2): with the chat template and room for a "
                      "%3-token answer, more than the %4-token context holds.")
                       .arg(locale.toString(tools), m_cost->offeredBreakdown(), locale.toString(maxTokens),
                            locale.toString(contextLimit));
    const ContextGrowth growth = largerContext();
    if (growth.tokens == 0)
        return text + QLatin1Char(' ') + tr("Turn servers or tools off for this chat under Tools.");
    if (growth.extraBytes < 0)
        return text + QLatin1Char(' ')
               + tr("Turn servers or tools off for this chat under Tools, or open the model with a context of %1 tokens.")
                     .arg(locale.toString(growth.tokens));
    return text + QLatin1Char(' ')
           + tr("Turn servers or tools off for this chat under Tools, or open the model with a context of %1 tokens, "
                "which needs about %2 more RAM.")
                 .arg(locale.toString(growth.tokens), Units::bytes(growth.extraBytes));
}

bool ChatContextMeter::toolsFillContext() const
{
    return !toolsDoNotFit().isEmpty() && m_cost->baseTokens() >= limit();
}

QString ChatContextMeter::readEstimate() const
{
    if (m_readRate <= 0 || m_used <= 0 || m_templateOnly)
        return {};
    const int unread = std::max(0, m_used - m_readTokens.value(m_session->current().id));
    const double seconds = unread / m_readRate;
    if (seconds < 60)
        return {};
    return tr("reading this takes about %1").arg(Units::duration(qint64(std::lround(seconds))));
}

void ChatContextMeter::setReadRate(double tokensPerSecond)
{
    if (tokensPerSecond == m_readRate)
        return;
    m_readRate = std::max(0.0, tokensPerSecond);
    Q_EMIT contextChanged();
}

void ChatContextMeter::setDraft(const QString &text)
{
    if (text == m_draft)
        return;
    m_draft = text;
    // Typing changes the draft on every key: count once the typing pauses, not per key.
    m_recountTimer.start();
}

void ChatContextMeter::recount()
{
    m_recountTimer.stop();
    if (m_engine->state() != EngineController::Ready && m_engine->state() != EngineController::Generating) {
        if (m_used != 0) {
            m_used = 0;
            Q_EMIT contextChanged();
        }
        return;
    }
    QList<ChatMessage> list = m_session->messages()->messages();
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
    Dialogue dialogue = chatDialogue(list, 0, m_session->settings());
    dialogue.tools = m_tools->offeredTools();
    m_count = m_engine->countDialogue(dialogue, openChatFormat(*m_engine));
    connect(m_count, &TokenCount::counted, this, &ChatContextMeter::onCounted);
}

void ChatContextMeter::onCounted(int tokens)
{
    if (tokens < 0) // not renderable (an unreadable image): keep the last count
        return;
    m_used = tokens;
    m_templateOnly = m_countingTemplateOnly;
    Q_EMIT contextChanged();
}
