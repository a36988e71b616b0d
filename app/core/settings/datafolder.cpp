#include "settings/datafolder.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace {

// Moves what an earlier version kept in `from` into `to`, entry by entry (a rename on the
// same disk); an entry that exists in both stays where it is.
void moveUp(const QString &from, const QString &to)
{
    QDir old(from);
    for (const QString &name : old.entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)) {
        const QString target = to + QLatin1Char('/') + name;
        if (!QFileInfo::exists(target))
            QDir().rename(old.filePath(name), target);
    }
    old.rmdir(from); // only when it is empty now
}

} // namespace

QString appDataFolder()
{
    const QString generic = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    const QString dir = generic + QLatin1Char('/') + QCoreApplication::applicationName();
    QDir().mkpath(dir);
    const QString doubled = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    if (QDir::cleanPath(doubled) != QDir::cleanPath(dir) && QFileInfo(doubled).isDir())
        moveUp(doubled, dir);
    return dir;
}

QString studioDataFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QLatin1Char('/') +
           QString::fromLatin1(kStudioName);
}

QString studioModelsFolder()
{
    const QSettings settings(QString::fromLatin1(kStudioName), QString::fromLatin1(kStudioName));
    return settings.value(QStringLiteral("models/folder"), studioDataFolder() + QStringLiteral("/models")).toString();
}
