#include "chat/toolloop.h"

#include "chat/conversationsession.h"
#include "generation/generationtypes.h"
#include "mcp/mcphub.h"
#include "mcp/mcpreply.h"
#include "mcp/mcptool.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRandomGenerator>

ToolLoop::ToolLoop(ConversationSession *session, QObject *parent) : QObject(parent), m_session(session) {}

void ToolLoop::setHub(McpHub *hub)
{
    if (m_hub)
        m_hub->disconnect(this);
    m_hub = hub;
    // The offered declarations are part of the prompt: the context meter counts them.
    if (m_hub)
        connect(m_hub, &McpHub::toolsChanged, this, &ToolLoop::offerChanged);
    Q_EMIT offerChanged();
}

void ToolLoop::setToolChoice(const QString &choice)
{
    const QString c = choice.trimmed().isEmpty() ? QStringLiteral("auto") : choice.trimmed();
    if (c == m_toolChoice)
        return;
    m_toolChoice = c;
    Q_EMIT toolChoiceChanged();
    Q_EMIT offerChanged(); // "none" offers no declarations, the others all of them
}

bool ToolLoop::pending() const
{
    for (const ChatMessage &m : m_session->messages()->messages())
        if (m.toolOpen())
            return true;
    return false;
}

QJsonArray ToolLoop::offeredTools() const
{
    // Offered in the model's own tool format (the engine's renderer declares them; a remote
    // engine's server renders its chat, tools included, itself).
    if (!m_hub || m_toolChoice == QLatin1String("none"))
        return {};
    const QJsonArray all = m_hub->toolSet().openAiTools(m_session->settings().tools);
    if (m_toolChoice == QLatin1String("auto") || m_toolChoice == QLatin1String("required"))
        return all;
    // A named tool: offered only when it is there (else the answer is free, not forced).
    for (const QJsonValue &t : all)
        if (t.toObject().value(QLatin1String("function")).toObject().value(QLatin1String("name")).toString() == m_toolChoice)
            return all;
    return {};
}

void ToolLoop::setServerOffered(const QString &server, bool on)
{
    McpToolSelection selection = m_session->settings().tools;
    selection.setServer(server, on);
    setSelection(selection);
}

void ToolLoop::setToolOffered(const QString &server, const QString &tool, bool on)
{
    McpToolSelection selection = m_session->settings().tools;
    selection.setTool(server, tool, on);
    // Turning a tool on in a server that is off turns the server on for it.
    if (on)
        selection.setServer(server, true);
    setSelection(selection);
}

void ToolLoop::setSelection(const McpToolSelection &selection)
{
    if (m_session->changeSetting(&ConversationSettings::tools, selection))
        Q_EMIT offerChanged();
}

QJsonArray ToolLoop::takeToolCalls(const GenerationResult &result)
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

void ToolLoop::openToolCalls(qint64 conversationId, const QJsonArray &calls, bool shown)
{
    MessageModel *messages = m_session->messages();
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
        if (m_session->store() && conversationId != 0)
            m.id = m_session->saveMessage(conversationId, m);
        if (!shown)
            continue;
        messages->append(m);
        if (entry && m_hub->alwaysAllowed(entry->server, entry->tool.name))
            toRun << messages->rowCount() - 1;
    }
    if (!shown)
        return;
    Q_EMIT toolPendingChanged();
    for (const int row : std::as_const(toRun))
        runTool(row);
}

bool ToolLoop::answer(int row, const QString &decision)
{
    const MessageModel *messages = m_session->messages();
    if (row < 0 || row >= messages->rowCount())
        return false;
    ChatMessage m = messages->at(row);
    if (m.role != QLatin1String("tool") || m.toolStatus() != QLatin1String("awaiting"))
        return false;
    if (decision == QLatin1String("deny")) {
        m.tool.insert(QStringLiteral("status"), QStringLiteral("denied"));
        m.text = tr("The person declined to run this tool.");
        updateToolMessage(m_session->current().id, m);
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

void ToolLoop::runTool(int row)
{
    const qint64 conversationId = m_session->current().id;
    ChatMessage m = m_session->messages()->at(row);
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
    else if (const McpToolSet::Entry *entry = m_hub->toolSet().resolve(name);
             entry && !m_session->settings().tools.offers(entry->server, entry->tool.name))
        // Offered when the answer began, or written by the model unasked: this chat has it off now.
        error = tr("this chat does not offer %1 from %2 (turn it on under Tools to use it)").arg(entry->tool.name, entry->server);
    else
        reply = m_hub->call(name, arguments.object(), &error);
    if (!reply) {
        m.tool.insert(QStringLiteral("status"), QStringLiteral("failed"));
        m.error = error;
        m.text = tr("The tool could not run: %1.").arg(error);
        updateToolMessage(conversationId, m);
        continueAfterTools();
        return;
    }
    m.tool.insert(QStringLiteral("status"), QStringLiteral("running"));
    updateToolMessage(conversationId, m);
    m_toolRuns.insert(reply, ToolRun{conversationId, m});
    connect(reply, &McpReply::finished, this, [this, reply] { settleTool(reply); });
}

void ToolLoop::settleTool(McpReply *reply)
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
    if (run.conversationId == m_session->current().id)
        continueAfterTools();
}

void ToolLoop::updateToolMessage(qint64 conversationId, const ChatMessage &message)
{
    if (m_session->store() && conversationId != 0 && message.id != 0)
        m_session->saveMessage(conversationId, message);
    if (conversationId != m_session->current().id)
        return;
    MessageModel *messages = m_session->messages();
    for (int row = 0; row < messages->rowCount(); ++row) {
        const ChatMessage &shown = messages->at(row);
        if (message.id != 0 ? shown.id == message.id
                            : shown.role == QLatin1String("tool") && shown.tool.value(QLatin1String("id")) == message.tool.value(QLatin1String("id"))) {
            messages->replace(row, message);
            break;
        }
    }
    Q_EMIT toolPendingChanged();
}

void ToolLoop::continueAfterTools()
{
    // Whether an answer is running or the model is ready is ChatController's to check.
    if (pending())
        return;
    const QList<ChatMessage> &list = m_session->messages()->messages();
    if (list.isEmpty() || list.last().role != QLatin1String("tool"))
        return;
    Q_EMIT readyToContinue();
}
