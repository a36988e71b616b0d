#include "chat/conversationstore.h"

#include <QAtomicInteger>
#include <QFileInfo>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QVariant>
#include <QtSql/QSqlError>
#include <QtSql/QSqlQuery>

#include <stdexcept>

namespace {

QAtomicInteger<int> s_connections = 0;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

QString joinPaths(const QStringList &paths)
{
    return QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(paths)).toJson(QJsonDocument::Compact));
}

QStringList splitPaths(const QString &json)
{
    QStringList out;
    const QJsonArray a = QJsonDocument::fromJson(json.toUtf8()).array();
    for (const QJsonValue &v : a)
        out << v.toString();
    return out;
}

// A null QString binds as SQL NULL; the columns are NOT NULL text.
QString nn(const QString &s)
{
    return s.isNull() ? QStringLiteral("") : s;
}

void check(QSqlQuery &q, const QString &what)
{
    if (!q.exec())
        throw std::runtime_error(QStringLiteral("chat database: %1 failed: %2").arg(what, q.lastError().text()).toStdString());
}

Conversation readConversation(const QSqlQuery &q)
{
    Conversation c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.created = QDateTime::fromMSecsSinceEpoch(q.value(2).toLongLong());
    c.updated = QDateTime::fromMSecsSinceEpoch(q.value(3).toLongLong());
    c.settings.systemPrompt = q.value(4).toString();
    c.settings.temperature = q.value(5).toDouble();
    c.settings.topP = q.value(6).toDouble();
    c.settings.maxTokens = q.value(7).toInt();
    c.settings.thinking = q.value(8).toBool();
    c.settings.thinkingBudget = q.value(9).toInt();
    c.settings.tools = McpToolSelection::fromJson(q.value(10).toString());
    c.modelPath = q.value(11).toString();
    c.modelName = q.value(12).toString();
    return c;
}

const char *kConversationColumns = "id, title, created, updated, system_prompt, temperature, top_p, max_tokens, thinking, thinking_budget, tools_off, model_path, model_name";

} // namespace

ConversationStore::ConversationStore(const QString &path)
    : m_path(path), m_connection(QStringLiteral("chat-%1").arg(++s_connections))
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
    db.setDatabaseName(path);
    if (!db.open())
        throw std::runtime_error(QStringLiteral("cannot open the chat database %1: %2 (check the folder is writable)")
                                     .arg(path, db.lastError().text()).toStdString());
    exec(QStringLiteral("PRAGMA foreign_keys = ON"));
    // WAL: a write is one append to the log, and a crash never leaves a half-written page.
    exec(QStringLiteral("PRAGMA journal_mode = WAL"));
    exec(QStringLiteral("PRAGMA synchronous = NORMAL"));
    exec(QStringLiteral("CREATE TABLE IF NOT EXISTS conversations ("
                        " id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL,"
                        " created INTEGER NOT NULL, updated INTEGER NOT NULL,"
                        " system_prompt TEXT NOT NULL DEFAULT '', temperature REAL NOT NULL DEFAULT 0.7,"
                        " top_p REAL NOT NULL DEFAULT 0.95, max_tokens INTEGER NOT NULL DEFAULT 1024,"
                        " thinking INTEGER NOT NULL DEFAULT 1)"));
    exec(QStringLiteral("CREATE TABLE IF NOT EXISTS messages ("
                        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                        " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
                        " role TEXT NOT NULL, content TEXT NOT NULL, thinking TEXT NOT NULL DEFAULT '',"
                        " thinking_seconds REAL NOT NULL DEFAULT 0, images TEXT NOT NULL DEFAULT '[]',"
                        " tokens INTEGER NOT NULL DEFAULT 0, tokens_per_second REAL NOT NULL DEFAULT 0,"
                        " hit_rate REAL NOT NULL DEFAULT 0, finish_reason TEXT NOT NULL DEFAULT '',"
                        " error TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL)"));
    exec(QStringLiteral("CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id)"));
    // Added later: databases written before have the table without these columns.
    addColumnIfMissing(QStringLiteral("conversations"), QStringLiteral("thinking_budget"),
                       QStringLiteral("INTEGER NOT NULL DEFAULT 0"));
    addColumnIfMissing(QStringLiteral("conversations"), QStringLiteral("tools_off"), QStringLiteral("TEXT NOT NULL DEFAULT ''"));
    addColumnIfMissing(QStringLiteral("conversations"), QStringLiteral("model_path"), QStringLiteral("TEXT NOT NULL DEFAULT ''"));
    addColumnIfMissing(QStringLiteral("conversations"), QStringLiteral("model_name"), QStringLiteral("TEXT NOT NULL DEFAULT ''"));
    addColumnIfMissing(QStringLiteral("messages"), QStringLiteral("raw"), QStringLiteral("TEXT NOT NULL DEFAULT ''"));
    addColumnIfMissing(QStringLiteral("messages"), QStringLiteral("opened_thinking"),
                       QStringLiteral("INTEGER NOT NULL DEFAULT 0"));
    addColumnIfMissing(QStringLiteral("messages"), QStringLiteral("tool"), QStringLiteral("TEXT NOT NULL DEFAULT ''"));
}

void ConversationStore::addColumnIfMissing(const QString &table, const QString &column, const QString &type) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    if (!q.exec(QStringLiteral("PRAGMA table_info(%1)").arg(table)))
        throw std::runtime_error(QStringLiteral("chat database %1: reading the columns of %2 failed: %3")
                                     .arg(m_path, table, q.lastError().text()).toStdString());
    while (q.next())
        if (q.value(1).toString() == column)
            return;
    exec(QStringLiteral("ALTER TABLE %1 ADD COLUMN %2 %3").arg(table, column, type));
}

ConversationStore::~ConversationStore()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
}

void ConversationStore::exec(const QString &sql) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    if (!q.exec(sql))
        throw std::runtime_error(QStringLiteral("chat database %1: %2 failed: %3")
                                     .arg(m_path, sql.left(40), q.lastError().text()).toStdString());
}

void ConversationStore::touch(qint64 conversationId) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE conversations SET updated = ? WHERE id = ?"));
    q.addBindValue(nowMs());
    q.addBindValue(conversationId);
    check(q, QStringLiteral("touching a conversation"));
}

QList<Conversation> ConversationStore::conversations(const QString &filter) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    const QString cols = QString::fromLatin1(kConversationColumns);
    if (filter.trimmed().isEmpty()) {
        q.prepare(QStringLiteral("SELECT %1 FROM conversations ORDER BY updated DESC, id DESC").arg(cols));
    } else {
        // LIKE is case-insensitive for ASCII in SQLite; escape the wildcards the user typed.
        QString pattern = filter.trimmed();
        pattern.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
            .replace(QLatin1Char('%'), QStringLiteral("\\%"))
            .replace(QLatin1Char('_'), QStringLiteral("\\_"));
        pattern = QLatin1Char('%') + pattern + QLatin1Char('%');
        q.prepare(QStringLiteral("SELECT %1 FROM conversations c WHERE c.title LIKE ? ESCAPE '\\'"
                                 " OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id"
                                 " AND m.content LIKE ? ESCAPE '\\') ORDER BY updated DESC, id DESC").arg(cols));
        q.addBindValue(pattern);
        q.addBindValue(pattern);
    }
    check(q, QStringLiteral("listing conversations"));
    QList<Conversation> out;
    while (q.next())
        out << readConversation(q);
    return out;
}

Conversation ConversationStore::conversation(qint64 id) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT %1 FROM conversations WHERE id = ?").arg(QString::fromLatin1(kConversationColumns)));
    q.addBindValue(id);
    check(q, QStringLiteral("reading a conversation"));
    return q.next() ? readConversation(q) : Conversation{};
}

Conversation ConversationStore::createConversation(const QString &title, const ConversationSettings &settings,
                                                   const QString &modelPath, const QString &modelName)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    const qint64 now = nowMs();
    q.prepare(QStringLiteral("INSERT INTO conversations (title, created, updated, system_prompt, temperature, top_p,"
                             " max_tokens, thinking, thinking_budget, tools_off, model_path, model_name)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(nn(title));
    q.addBindValue(now);
    q.addBindValue(now);
    q.addBindValue(nn(settings.systemPrompt));
    q.addBindValue(settings.temperature);
    q.addBindValue(settings.topP);
    q.addBindValue(settings.maxTokens);
    q.addBindValue(settings.thinking ? 1 : 0);
    q.addBindValue(settings.thinkingBudget);
    q.addBindValue(nn(settings.tools.toJson()));
    q.addBindValue(nn(modelPath));
    q.addBindValue(nn(modelName));
    check(q, QStringLiteral("creating a conversation"));
    return conversation(q.lastInsertId().toLongLong());
}

void ConversationStore::renameConversation(qint64 id, const QString &title)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"));
    q.addBindValue(nn(title));
    q.addBindValue(id);
    check(q, QStringLiteral("renaming a conversation"));
}

void ConversationStore::setSettings(qint64 id, const ConversationSettings &s)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE conversations SET system_prompt = ?, temperature = ?, top_p = ?, max_tokens = ?,"
                             " thinking = ?, thinking_budget = ?, tools_off = ? WHERE id = ?"));
    q.addBindValue(nn(s.systemPrompt));
    q.addBindValue(s.temperature);
    q.addBindValue(s.topP);
    q.addBindValue(s.maxTokens);
    q.addBindValue(s.thinking ? 1 : 0);
    q.addBindValue(s.thinkingBudget);
    q.addBindValue(nn(s.tools.toJson()));
    q.addBindValue(id);
    check(q, QStringLiteral("saving conversation settings"));
}

void ConversationStore::setModel(qint64 id, const QString &modelPath, const QString &modelName)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE conversations SET model_path = ?, model_name = ? WHERE id = ?"));
    q.addBindValue(nn(modelPath));
    q.addBindValue(nn(modelName));
    q.addBindValue(id);
    check(q, QStringLiteral("saving the conversation's model"));
}

void ConversationStore::deleteConversation(qint64 id)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    check(q, QStringLiteral("deleting a conversation"));
}

QList<ChatMessage> ConversationStore::messages(qint64 conversationId) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT id, role, content, thinking, thinking_seconds, images, tokens, tokens_per_second,"
                             " hit_rate, finish_reason, error, created, raw, opened_thinking, tool FROM messages"
                             " WHERE conversation_id = ? ORDER BY id"));
    q.addBindValue(conversationId);
    check(q, QStringLiteral("reading messages"));
    QList<ChatMessage> out;
    while (q.next()) {
        ChatMessage m;
        m.id = q.value(0).toLongLong();
        m.role = q.value(1).toString();
        m.text = q.value(2).toString();
        m.thinking = q.value(3).toString();
        m.thinkingSeconds = q.value(4).toDouble();
        m.imagePaths = splitPaths(q.value(5).toString());
        m.tokens = q.value(6).toInt();
        m.tokensPerSecond = q.value(7).toDouble();
        m.hitRate = q.value(8).toDouble();
        m.finishReason = q.value(9).toString();
        m.error = q.value(10).toString();
        m.created = QDateTime::fromMSecsSinceEpoch(q.value(11).toLongLong());
        m.raw = q.value(12).toString();
        m.openedThinking = q.value(13).toBool();
        m.tool = QJsonDocument::fromJson(q.value(14).toString().toUtf8()).object();
        out << m;
    }
    return out;
}

qint64 ConversationStore::saveMessage(qint64 conversationId, const ChatMessage &m)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    if (m.id == 0) {
        q.prepare(QStringLiteral("INSERT INTO messages (role, content, thinking, thinking_seconds, images, tokens,"
                                 " tokens_per_second, hit_rate, finish_reason, error, created, raw, opened_thinking,"
                                 " tool, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    } else {
        q.prepare(QStringLiteral("UPDATE messages SET role = ?, content = ?, thinking = ?, thinking_seconds = ?,"
                                 " images = ?, tokens = ?, tokens_per_second = ?, hit_rate = ?, finish_reason = ?,"
                                 " error = ?, created = ?, raw = ?, opened_thinking = ?, tool = ? WHERE conversation_id = ? AND id = ?"));
    }
    q.addBindValue(nn(m.role));
    q.addBindValue(nn(m.text));
    q.addBindValue(nn(m.thinking));
    q.addBindValue(m.thinkingSeconds);
    q.addBindValue(joinPaths(m.imagePaths));
    q.addBindValue(m.tokens);
    q.addBindValue(m.tokensPerSecond);
    q.addBindValue(m.hitRate);
    q.addBindValue(nn(m.finishReason));
    q.addBindValue(nn(m.error));
    q.addBindValue(m.created.isValid() ? m.created.toMSecsSinceEpoch() : nowMs());
    q.addBindValue(nn(m.raw));
    q.addBindValue(m.openedThinking ? 1 : 0);
    q.addBindValue(m.tool.isEmpty() ? QString(QLatin1String(""))
                                    : QString::fromUtf8(QJsonDocument(m.tool).toJson(QJsonDocument::Compact)));
    q.addBindValue(conversationId);
    if (m.id != 0)
        q.addBindValue(m.id);
    check(q, QStringLiteral("saving a message"));
    touch(conversationId);
    return m.id != 0 ? m.id : q.lastInsertId().toLongLong();
}

void ConversationStore::deleteMessage(qint64 messageId)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("DELETE FROM messages WHERE id = ?"));
    q.addBindValue(messageId);
    check(q, QStringLiteral("deleting a message"));
}

bool ConversationStore::imageInUse(const QString &path) const
{
    // The images column is a JSON array: look for the path as a JSON string, wildcards escaped.
    QString needle = joinPaths({path}).mid(1).chopped(1);
    needle.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
        .replace(QLatin1Char('%'), QStringLiteral("\\%"))
        .replace(QLatin1Char('_'), QStringLiteral("\\_"));
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT 1 FROM messages WHERE images LIKE ? ESCAPE '\\' LIMIT 1"));
    q.addBindValue(QLatin1Char('%') + needle + QLatin1Char('%'));
    check(q, QStringLiteral("looking up an image"));
    return q.next();
}
