#include "settings/appsettings.h"

#include "settings/datafolder.h"

#include <QDir>
#include <QFileInfo>
#include <QUrl>
#include <QStandardPaths>

AppSettings::AppSettings(QObject *parent) : QObject(parent) {}

void AppSettings::write(const QString &key, const QVariant &value)
{
    if (m_settings.value(key) == value)
        return;
    m_settings.setValue(key, value);
    Q_EMIT changed();
}

QString AppSettings::dataFolder() const
{
    return appDataFolder();
}

QString AppSettings::modelsFolder() const
{
    return m_settings.value(QStringLiteral("models/folder"), dataFolder() + QStringLiteral("/models")).toString();
}
void AppSettings::setModelsFolder(const QString &v) { write(QStringLiteral("models/folder"), v); }

QStringList AppSettings::openedContainers() const
{
    return m_settings.value(QStringLiteral("models/opened")).toStringList();
}

void AppSettings::rememberOpened(const QString &path)
{
    if (path.isEmpty())
        return;
    QStringList list = openedContainers();
    if (!list.isEmpty() && list.first() == path)
        return;
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kOpenedKept)
        list.removeLast();
    write(QStringLiteral("models/opened"), list);
}

QString AppSettings::lastModelPath() const { return m_settings.value(QStringLiteral("models/last")).toString(); }
void AppSettings::setLastModelPath(const QString &v) { write(QStringLiteral("models/last"), v); }

QString AppSettings::budgetKey(const QString &container)
{
    // QSettings reads '/' as a group separator: the path is percent-encoded into one key.
    const QString path = QFileInfo(container).absoluteFilePath();
    return QStringLiteral("budgets/") + QString::fromLatin1(QUrl::toPercentEncoding(path));
}

qint64 AppSettings::budgetFor(const QString &container) const
{
    if (container.isEmpty())
        return 0;
    return m_settings.value(budgetKey(container), 0).toLongLong();
}

void AppSettings::setBudgetFor(const QString &container, qint64 bytes)
{
    if (container.isEmpty())
        return;
    if (bytes <= 0) {
        if (!m_settings.contains(budgetKey(container)))
            return;
        m_settings.remove(budgetKey(container)); // back to the engine's default
        Q_EMIT changed();
        return;
    }
    write(budgetKey(container), bytes);
}

int AppSettings::contextTokens() const { return m_settings.value(QStringLiteral("engine/ctx"), 4096).toInt(); }
void AppSettings::setContextTokens(int v) { write(QStringLiteral("engine/ctx"), qBound(256, v, 1 << 20)); }

QString AppSettings::theme() const { return m_settings.value(QStringLiteral("ui/theme"), QStringLiteral("system")).toString(); }
void AppSettings::setTheme(const QString &v) { write(QStringLiteral("ui/theme"), v); }

int AppSettings::promptCacheGiB() const { return m_settings.value(QStringLiteral("engine/promptCacheGiB"), 4).toInt(); }
void AppSettings::setPromptCacheGiB(int v) { write(QStringLiteral("engine/promptCacheGiB"), qBound(0, v, 1024)); }

int AppSettings::fontSize() const { return m_settings.value(QStringLiteral("ui/fontSize"), 14).toInt(); }
void AppSettings::setFontSize(int v) { write(QStringLiteral("ui/fontSize"), qBound(10, v, 28)); }
