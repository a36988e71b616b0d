#include "settings/appsettings.h"

#include "settings/datafolder.h"

#include <QDir>
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

QString AppSettings::lastModelPath() const { return m_settings.value(QStringLiteral("models/last")).toString(); }
void AppSettings::setLastModelPath(const QString &v) { write(QStringLiteral("models/last"), v); }

qint64 AppSettings::budgetBytes() const { return m_settings.value(QStringLiteral("engine/budget"), 0).toLongLong(); }
void AppSettings::setBudgetBytes(qint64 v) { write(QStringLiteral("engine/budget"), qMax<qint64>(0, v)); }

int AppSettings::contextTokens() const { return m_settings.value(QStringLiteral("engine/ctx"), 4096).toInt(); }
void AppSettings::setContextTokens(int v) { write(QStringLiteral("engine/ctx"), qBound(256, v, 1 << 20)); }

QString AppSettings::theme() const { return m_settings.value(QStringLiteral("ui/theme"), QStringLiteral("system")).toString(); }
void AppSettings::setTheme(const QString &v) { write(QStringLiteral("ui/theme"), v); }

int AppSettings::fontSize() const { return m_settings.value(QStringLiteral("ui/fontSize"), 14).toInt(); }
void AppSettings::setFontSize(int v) { write(QStringLiteral("ui/fontSize"), qBound(10, v, 28)); }
