#include "chat/conversationlistmodel.h"

#include <QLocale>

ConversationListModel::ConversationListModel(QObject *parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_items.size());
}

QVariant ConversationListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Conversation &c = m_items.at(index.row());
    switch (role) {
    case IdRole:
        return c.id;
    case Qt::DisplayRole:
    case TitleRole:
        return c.title;
    case UpdatedRole:
        return c.updated;
    case UpdatedTextRole: {
        // Today: the time; earlier: the date. Short and calm.
        const QDate day = c.updated.date();
        return day == QDate::currentDate() ? QLocale().toString(c.updated.time(), QLocale::ShortFormat)
                                           : QLocale().toString(day, QLocale::ShortFormat);
    }
    default:
        return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const
{
    return {{IdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedRole, "updated"}, {UpdatedTextRole, "updatedText"}};
}

void ConversationListModel::setConversations(const QList<Conversation> &list)
{
    beginResetModel();
    m_items = list;
    endResetModel();
    Q_EMIT countChanged();
}

int ConversationListModel::rowOf(qint64 id) const
{
    for (int i = 0; i < m_items.size(); ++i)
        if (m_items.at(i).id == id)
            return i;
    return -1;
}

qint64 ConversationListModel::idAt(int row) const
{
    return row >= 0 && row < m_items.size() ? m_items.at(row).id : 0;
}
