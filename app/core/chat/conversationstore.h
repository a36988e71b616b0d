// ConversationStore: conversations and their messages in SQLite (Qt SQL). Every change is
// written when it happens (a message when it is sent or finished, a rename when it is
// made), never batched until quit, so nothing is lost on a crash. Used on the GUI thread
// only; the writes are a few rows each, well under a millisecond on a local file.
#pragma once

#include "chat/chatmessage.h"

#include <QList>
#include <QString>
#include <QtSql/QSqlDatabase>

class ConversationStore {
public:
    // Opens (or creates) the database file. Throws std::runtime_error naming the file
    // when it cannot be opened or its schema cannot be created.
    explicit ConversationStore(const QString &path);
    ~ConversationStore();
    ConversationStore(const ConversationStore &) = delete;
    ConversationStore &operator=(const ConversationStore &) = delete;

    QString path() const { return m_path; }

    // Newest first. A non-empty filter keeps conversations whose title or any message
    // contains it (case-insensitive).
    QList<Conversation> conversations(const QString &filter = {}) const;
    Conversation conversation(qint64 id) const; // id 0 when it does not exist

    Conversation createConversation(const QString &title, const ConversationSettings &settings,
                                    const QString &modelPath = {}, const QString &modelName = {});
    void renameConversation(qint64 id, const QString &title);
    void setSettings(qint64 id, const ConversationSettings &settings);
    // Ties the conversation to another model (the person chose to continue with it).
    void setModel(qint64 id, const QString &modelPath, const QString &modelName);
    void deleteConversation(qint64 id);

    QList<ChatMessage> messages(qint64 conversationId) const;
    // Inserts (id 0) or updates the message; returns its id. Touches the conversation.
    qint64 saveMessage(qint64 conversationId, const ChatMessage &message);
    void deleteMessage(qint64 messageId);
    // Whether any message still lists this image file.
    bool imageInUse(const QString &path) const;

private:
    void exec(const QString &sql) const;
    void addColumnIfMissing(const QString &table, const QString &column, const QString &type) const;
    void touch(qint64 conversationId) const;

    QString m_path;
    QString m_connection;
};
