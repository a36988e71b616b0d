// MessageModel: the messages of the open conversation for the chat view. Changed on the
// GUI thread only (the controller applies the engine's batched tokens here); streaming
// text changes one row's text role at a time. The text and thinking roles are the message as
// stored (a reply keeps the model's special tokens, for the next prompt); displayText and
// displayThinking are what a person reads: the open model's specials taken out.
#pragma once

#include "chat/chatmessage.h"

#include <QAbstractListModel>
#include <QQmlEngine>

class MessageModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role {
        RoleRole = Qt::UserRole + 1,
        TextRole,
        ThinkingRole,
        ThinkingSecondsRole,
        ImagesRole,
        TokensRole,
        TokensPerSecondRole,
        HitRateRole,
        FinishReasonRole,
        ErrorRole,
        StreamingRole,
        CreatedRole,
        // A tool message's call and outcome (ChatMessage::tool): name, server, arguments
        // (pretty JSON), status; an answer's calls under "calls".
        ToolRole,
        DisplayTextRole,
        DisplayThinkingRole,
    };
    Q_ENUM(Role)

    explicit MessageModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    const QList<ChatMessage> &messages() const { return m_messages; }
    const ChatMessage &at(int row) const { return m_messages.at(row); }
    void setMessages(const QList<ChatMessage> &messages);
    void append(const ChatMessage &message);
    // Replaces row `row` and signals only the roles that changed.
    void replace(int row, const ChatMessage &message);
    // Drops every row from `row` on (edit-and-resend, regenerate).
    void truncate(int row);
    // The special tokens' texts that the display roles leave out (the open model's).
    void setHiddenSpecials(const QStringList &specials);

Q_SIGNALS:
    void countChanged();

private:
    QList<ChatMessage> m_messages;
    QStringList m_hiddenSpecials;
};
