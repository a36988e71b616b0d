#include "chat/messagemodel.h"

#include "chat/specialmarkers.h"

#include <QJsonDocument>

MessageModel::MessageModel(QObject *parent) : QAbstractListModel(parent) {}

int MessageModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_messages.size());
}

QVariant MessageModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ChatMessage &m = m_messages.at(index.row());
    switch (role) {
    // An answer's channels are kept exactly as the model wrote them (the next prompt repeats
    // them); they are shown without the blank space around them.
    case Qt::DisplayRole:
    case TextRole:
        return m.text.trimmed();
    case RoleRole:
        return m.role;
    case ThinkingRole:
        return m.thinking.trimmed();
    case DisplayTextRole:
        // A person's own words are shown as written; a reply without the model's markup.
        return m.role == QLatin1String("assistant") ? withoutSpecials(m.text, m_hiddenSpecials).trimmed() : m.text.trimmed();
    case DisplayThinkingRole:
        return withoutSpecials(m.thinking, m_hiddenSpecials).trimmed();
    case ThinkingSecondsRole:
        return m.thinkingSeconds;
    case ImagesRole:
        return m.imagePaths;
    case TokensRole:
        return m.tokens;
    case TokensPerSecondRole:
        return m.tokensPerSecond;
    case HitRateRole:
        return m.hitRate;
    case FinishReasonRole:
        return m.finishReason;
    case ErrorRole:
        return m.error;
    case StreamingRole:
        return m.streaming;
    case CreatedRole:
        return m.created;
    case ToolRole: {
        QVariantMap tool = m.tool.toVariantMap();
        // Arguments as a person reads them: indented JSON when they are JSON.
        const QJsonDocument args = QJsonDocument::fromJson(m.tool.value(QLatin1String("arguments")).toString().toUtf8());
        if (args.isObject())
            tool.insert(QStringLiteral("arguments"), QString::fromUtf8(args.toJson(QJsonDocument::Indented)).trimmed());
        return tool;
    }
    default:
        return {};
    }
}

QHash<int, QByteArray> MessageModel::roleNames() const
{
    return {
        {RoleRole, "role"},
        {TextRole, "text"},
        {ThinkingRole, "thinking"},
        {ThinkingSecondsRole, "thinkingSeconds"},
        {ImagesRole, "images"},
        {TokensRole, "tokens"},
        {TokensPerSecondRole, "tokensPerSecond"},
        {HitRateRole, "hitRate"},
        {FinishReasonRole, "finishReason"},
        {ErrorRole, "error"},
        {StreamingRole, "streaming"},
        {CreatedRole, "created"},
        {ToolRole, "tool"},
        {DisplayTextRole, "displayText"},
        {DisplayThinkingRole, "displayThinking"},
    };
}

void MessageModel::setMessages(const QList<ChatMessage> &messages)
{
    beginResetModel();
    m_messages = messages;
    endResetModel();
    Q_EMIT countChanged();
}

void MessageModel::append(const ChatMessage &message)
{
    const int row = int(m_messages.size());
    beginInsertRows({}, row, row);
    m_messages.append(message);
    endInsertRows();
    Q_EMIT countChanged();
}

void MessageModel::replace(int row, const ChatMessage &m)
{
    if (row < 0 || row >= m_messages.size())
        return;
    const ChatMessage old = m_messages.at(row);
    m_messages[row] = m;
    QList<int> roles;
    if (old.text != m.text)
        roles << TextRole << Qt::DisplayRole << DisplayTextRole;
    if (old.role != m.role)
        roles << RoleRole;
    if (old.thinking != m.thinking)
        roles << ThinkingRole << DisplayThinkingRole;
    if (old.thinkingSeconds != m.thinkingSeconds)
        roles << ThinkingSecondsRole;
    if (old.imagePaths != m.imagePaths)
        roles << ImagesRole;
    if (old.tokens != m.tokens)
        roles << TokensRole;
    if (old.tokensPerSecond != m.tokensPerSecond)
        roles << TokensPerSecondRole;
    if (old.hitRate != m.hitRate)
        roles << HitRateRole;
    if (old.finishReason != m.finishReason)
        roles << FinishReasonRole;
    if (old.error != m.error)
        roles << ErrorRole;
    if (old.streaming != m.streaming)
        roles << StreamingRole;
    if (old.created != m.created)
        roles << CreatedRole;
    if (old.tool != m.tool)
        roles << ToolRole;
    if (!roles.isEmpty())
        Q_EMIT dataChanged(index(row), index(row), roles);
}

void MessageModel::truncate(int row)
{
    row = qMax(0, row);
    if (row >= m_messages.size())
        return;
    beginRemoveRows({}, row, int(m_messages.size()) - 1);
    m_messages.erase(m_messages.begin() + row, m_messages.end());
    endRemoveRows();
    Q_EMIT countChanged();
}

void MessageModel::setHiddenSpecials(const QStringList &specials)
{
    if (specials == m_hiddenSpecials)
        return;
    m_hiddenSpecials = specials;
    if (!m_messages.isEmpty())
        Q_EMIT dataChanged(index(0), index(int(m_messages.size()) - 1), {DisplayTextRole, DisplayThinkingRole});
}
