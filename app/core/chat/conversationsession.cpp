#include "chat/conversationsession.h"

#include "engine/enginecontroller.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <exception>

namespace {

QString titleFrom(const QString &text)
{
    QString t = text.simplified();
    if (t.size() > 48) {
        t.truncate(47);
        const qsizetype space = t.lastIndexOf(QLatin1Char(' '));
        if (space > 24)
            t.truncate(space);
        t += QChar(0x2026);
    }
    return t.isEmpty() ? QObject::tr("New chat") : t;
}

} // namespace

ConversationSession::ConversationSession(EngineController *engine, const QString &databasePath, QObject *parent)
    : QObject(parent), m_engine(engine)
{
    try {
        m_store = std::make_unique<ConversationStore>(databasePath);
    } catch (const std::exception &e) {
        m_storeError = QString::fromStdString(e.what());
    }
    refreshList();
}

ConversationSession::~ConversationSession() = default;

void ConversationSession::refreshList()
{
    m_list.setConversations(m_store ? m_store->conversations(m_search) : QList<Conversation>{});
}

void ConversationSession::setSearch(const QString &text)
{
    if (text == m_search)
        return;
    m_search = text;
    refreshList();
    Q_EMIT searchChanged();
}

void ConversationSession::clear()
{
    m_current = Conversation{};
    m_settings = ConversationSettings{};
    m_messages.setMessages({});
}

bool ConversationSession::open(qint64 id, const ChatMessage *live)
{
    if (!m_store || id == m_current.id)
        return false;
    const Conversation c = m_store->conversation(id);
    if (c.id == 0)
        return false;
    m_current = c;
    m_settings = c.settings;
    QList<ChatMessage> list = m_store->messages(id);
    if (live)
        list << *live;
    m_messages.setMessages(list);
    return true;
}

void ConversationSession::rename(qint64 id, const QString &title)
{
    const QString t = title.simplified();
    if (!m_store || t.isEmpty())
        return;
    m_store->renameConversation(id, t);
    if (id == m_current.id) {
        m_current.title = t;
        Q_EMIT currentChanged();
    }
    refreshList();
}

void ConversationSession::remove(qint64 id)
{
    if (!m_store)
        return;
    QStringList images;
    for (const ChatMessage &m : m_store->messages(id))
        images << m.imagePaths;
    m_store->deleteConversation(id);
    m_engine->forgetState(stateFileFor(id));
    // Copies no other conversation uses go with it.
    const QString folder = QDir(imagesFolder()).absolutePath();
    for (const QString &image : std::as_const(images))
        if (QFileInfo(image).absolutePath() == folder && !m_store->imageInUse(image))
            QFile::remove(image);
}

void ConversationSession::createIfNew(const QString &firstMessage)
{
    if (m_current.id != 0)
        return;
    if (m_store) {
        m_current = m_store->createConversation(titleFrom(firstMessage), m_settings, m_engine->modelPath(),
                                                m_engine->modelName());
    } else {
        m_current.title = titleFrom(firstMessage);
        m_current.created = QDateTime::currentDateTime();
        m_current.modelPath = m_engine->modelPath();
        m_current.modelName = m_engine->modelName();
    }
    Q_EMIT currentChanged();
}

void ConversationSession::tieToOpenModel()
{
    if (m_current.id == 0 || m_engine->modelPath().isEmpty())
        return;
    m_current.modelPath = m_engine->modelPath();
    m_current.modelName = m_engine->modelName();
    if (m_store)
        m_store->setModel(m_current.id, m_current.modelPath, m_current.modelName);
    Q_EMIT currentChanged();
}

qint64 ConversationSession::saveMessage(qint64 conversationId, const ChatMessage &message)
{
    return m_store ? m_store->saveMessage(conversationId, message) : message.id;
}

void ConversationSession::deleteMessage(qint64 messageId)
{
    if (m_store)
        m_store->deleteMessage(messageId);
}

QString ConversationSession::stateFileFor(qint64 conversationId) const
{
    if (!m_store || conversationId == 0)
        return {};
    return QFileInfo(m_store->path()).absoluteDir().filePath(
        QStringLiteral("states/conversation-%1.state").arg(conversationId));
}

QString ConversationSession::imagesFolder() const
{
    return m_store ? QFileInfo(m_store->path()).absoluteDir().filePath(QStringLiteral("images")) : QString();
}

void ConversationSession::saveSettings()
{
    if (m_store && m_current.id != 0)
        m_store->setSettings(m_current.id, m_settings);
    Q_EMIT settingsChanged();
}

void ConversationSession::setSampling(double ConversationSettings::*field, double v, double lo, double hi)
{
    v = qBound(lo, v, hi);
    // +1: qFuzzyCompare is relative, and a setting may be 0.
    if (qFuzzyCompare(v + 1, m_settings.*field + 1))
        return;
    m_settings.*field = v;
    saveSettings();
}
