// ConversationListModel: the sidebar's conversations, newest first, as the store returns
// them for the current search. Changed on the GUI thread only.
#pragma once

#include "chat/chatmessage.h"

#include <QAbstractListModel>
#include <QQmlEngine>

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole, UpdatedTextRole };
    Q_ENUM(Role)

    explicit ConversationListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setConversations(const QList<Conversation> &list);
    int rowOf(qint64 id) const;
    Q_INVOKABLE qint64 idAt(int row) const;

Q_SIGNALS:
    void countChanged();

private:
    QList<Conversation> m_items;
};
