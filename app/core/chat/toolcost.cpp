#include "chat/toolcost.h"

#include "chat/chatdialogue.h"
#include "chat/conversationsession.h"
#include "chat/toolloop.h"
#include "engine/enginecontroller.h"
#include "mcp/mcphub.h"

#include <QLocale>
#include <QTimer>

#include <algorithm>
#include <cstdlib>

ToolCost::ToolCost(EngineController *engine, ConversationSession *session, ToolLoop *tools, QObject *parent)
    : QObject(parent), m_engine(engine), m_session(session), m_tools(tools)
{
}

void ToolCost::clear()
{
    const bool had = m_counted || !m_servers.isEmpty();
    for (const QPointer<TokenCount> &c : std::as_const(m_pending))
        if (c)
            c->disconnect(this);
    m_pending.clear();
    m_results.clear();
    m_waiting = 0;
    m_counted = false;
    m_baseTokens = m_offeredTokens = 0;
    m_servers.clear();
    if (had)
        Q_EMIT changed();
}

void ToolCost::recountSoon()
{
    // Several changes arrive together (a server's tools listed, the choice, a new chat): one count.
    if (m_recountQueued)
        return;
    m_recountQueued = true;
    QTimer::singleShot(0, this, [this] {
        m_recountQueued = false;
        recount();
    });
}

void ToolCost::recount()
{
    clear();
    const McpHub *hub = m_tools->hub();
    if (!hub || hub->toolSet().entries().isEmpty())
        return;
    if (m_engine->state() != EngineController::Ready && m_engine->state() != EngineController::Generating)
        return;
    if (m_engine->isRemote()) // a remote server renders (and counts) its prompts itself
        return;
    const McpToolSelection selection = m_session->settings().tools;
    // One row per server, in the order the tool set lists them.
    for (const McpToolSet::Entry &e : hub->toolSet().entries()) {
        auto row = std::find_if(m_servers.begin(), m_servers.end(), [&](const Server &s) { return s.name == e.server; });
        if (row == m_servers.end())
            row = m_servers.insert(m_servers.end(), Server{e.server, 0, 0, 0});
        ++row->tools;
        row->offeredTools += selection.offers(e.server, e.tool.name) ? 1 : 0;
    }
    m_anyOffered = !m_tools->offeredTools().isEmpty();

    // The tools as the chat's selection offers them, whatever the tool choice: what a server
    // costs is shown even while the choice offers none.
    QList<QJsonArray> variants{QJsonArray{}, hub->toolSet().openAiTools(selection)};
    for (const Server &s : std::as_const(m_servers)) {
        McpToolSelection switched = selection;
        switched.setServer(s.name, s.offeredTools == 0);
        variants << hub->toolSet().openAiTools(switched);
    }
    const Dialogue base = chatDialogue({}, 0, m_session->settings());
    const waste::ChatFormat format = openChatFormat(*m_engine);
    m_results = QList<int>(variants.size(), -1);
    m_waiting = int(variants.size());
    for (int i = 0; i < variants.size(); ++i) {
        Dialogue d = base;
        d.tools = variants.at(i);
        TokenCount *count = m_engine->countDialogue(d, format);
        m_pending << count;
        connect(count, &TokenCount::counted, this, [this, i](int tokens) { onCounted(i, tokens); });
    }
}

void ToolCost::onCounted(int index, int tokens)
{
    m_results[index] = tokens;
    if (--m_waiting > 0)
        return;
    m_pending.clear();
    for (const int r : std::as_const(m_results))
        if (r < 0) // not renderable, or the model closed meanwhile: nothing to show
            return;
    const int none = m_results.at(0);
    const int offered = m_results.at(1);
    for (int i = 0; i < m_servers.size(); ++i)
        m_servers[i].tokens = std::abs(offered - m_results.at(2 + i));
    m_offeredTokens = m_anyOffered ? offered - none : 0;
    m_baseTokens = m_anyOffered ? offered : none;
    m_counted = true;
    Q_EMIT changed();
}

QString ToolCost::offeredBreakdown() const
{
    QStringList parts;
    for (const Server &s : m_servers)
        if (s.offeredTools > 0)
            parts << QStringLiteral("%1 %2").arg(s.name, QLocale().toString(s.tokens));
    return parts.join(QStringLiteral(", "));
}

QVariantList ToolCost::serversForQml() const
{
    QVariantList out;
    const McpHub *hub = m_tools->hub();
    if (!hub)
        return out;
    const McpToolSelection &selection = m_session->settings().tools;
    // Every server with tools, counted or not yet; its tools in the order it lists them.
    QStringList names;
    for (const McpToolSet::Entry &e : hub->toolSet().entries())
        if (!names.contains(e.server))
            names << e.server;
    for (const QString &name : std::as_const(names)) {
        QVariantList toolList;
        int offered = 0;
        for (const McpToolSet::Entry &e : hub->toolSet().entries())
            if (e.server == name) {
                const bool on = selection.offers(name, e.tool.name);
                offered += on ? 1 : 0;
                toolList.append(QVariantMap{{QStringLiteral("name"), e.tool.name}, {QStringLiteral("offered"), on}});
            }
        int tokens = -1;
        for (const Server &s : m_servers)
            if (s.name == name && m_counted)
                tokens = s.tokens;
        out.append(QVariantMap{{QStringLiteral("name"), name},
                               {QStringLiteral("tools"), int(toolList.size())},
                               {QStringLiteral("offeredTools"), offered},
                               {QStringLiteral("offered"), selection.offersServer(name)},
                               {QStringLiteral("tokens"), tokens},
                               {QStringLiteral("toolList"), toolList}});
    }
    return out;
}
