// ConversationSession: the chat's conversations. Owns the SQLite store (ConversationStore),
// the sidebar's list (with its search) and the open conversation: its row, its settings and
// its messages as the view shows them. Creates, opens, renames and deletes conversations;
// a deleted one takes its saved engine state and the image copies no other one uses. Each
// conversation's engine state is saved beside the database (states/conversation-ID.state),
// so reopening it continues without reading the whole history again; sent images are copied
// beside it too (images/).
// Part of ChatController, which says what changed to QML: open() and clear() emit nothing,
// so the controller signals once everything that goes with a new conversation has changed.
#pragma once

#include "chat/chatmessage.h"
#include "chat/conversationlistmodel.h"
#include "chat/conversationstore.h"
#include "chat/messagemodel.h"

#include <QObject>
#include <QString>

#include <memory>
#include <type_traits>

class EngineController;

class ConversationSession : public QObject {
    Q_OBJECT

public:
    // Without a store (the database cannot be opened) the chat still works for this session;
    // storeError() says why nothing is kept.
    ConversationSession(EngineController *engine, const QString &databasePath, QObject *parent = nullptr);
    ~ConversationSession() override;

    ConversationStore *store() const { return m_store.get(); }
    QString storeError() const { return m_storeError; }
    ConversationListModel *list() { return &m_list; }
    MessageModel *messages() { return &m_messages; }
    const MessageModel *messages() const { return &m_messages; }
    const Conversation &current() const { return m_current; }
    const ConversationSettings &settings() const { return m_settings; }

    QString search() const { return m_search; }
    void setSearch(const QString &text);
    void refreshList();

    // A new, empty conversation (stored on its first message).
    void clear();
    // Opens a stored conversation; `live` is its answer still arriving, shown after the
    // stored messages. False when there is nothing to open (no store, unknown, already open).
    bool open(qint64 id, const ChatMessage *live);
    void rename(qint64 id, const QString &title);
    // Deletes the conversation, its engine state and the image copies no other one uses.
    // The list and the open conversation are the caller's to update.
    void remove(qint64 id);
    // Stores the open conversation on its first message, titled from it and tied to the
    // model open now.
    void createIfNew(const QString &firstMessage);
    // Ties the open conversation to the model open now (the person chose to continue with it,
    // or it was stored before conversations recorded their model).
    void tieToOpenModel();

    // Writes the message into the store; returns its id (its own without a store).
    qint64 saveMessage(qint64 conversationId, const ChatMessage &message);
    void deleteMessage(qint64 messageId);

    // Where the engine state of a conversation is saved (empty without a store).
    QString stateFileFor(qint64 conversationId) const;
    // Where copies of sent images are kept (empty without a store).
    QString imagesFolder() const;

    // One setting of the open conversation: stored and saved when it differs; true then.
    template <typename T>
    bool changeSetting(T ConversationSettings::*field, const std::type_identity_t<T> &v)
    {
        if (v == m_settings.*field)
            return false;
        m_settings.*field = v;
        saveSettings();
        return true;
    }
    // A sampling setting (temperature, top-p): clamped to [lo, hi], saved when it moved.
    void setSampling(double ConversationSettings::*field, double v, double lo, double hi);

Q_SIGNALS:
    // Only for what changes on its own: a rename, a conversation stored on its first message.
    void currentChanged();
    void searchChanged();
    void settingsChanged();

private:
    void saveSettings();

    EngineController *m_engine;
    std::unique_ptr<ConversationStore> m_store;
    QString m_storeError;
    ConversationListModel m_list;
    MessageModel m_messages;
    Conversation m_current;
    ConversationSettings m_settings;
    QString m_search;
};
