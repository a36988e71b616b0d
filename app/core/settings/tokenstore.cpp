#include "settings/tokenstore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace tokenstore {

namespace {
const QString kLegacyKey = QStringLiteral("download/token");
constexpr QFile::Permissions kOwnerOnly = QFile::ReadOwner | QFile::WriteOwner;
} // namespace

QString path()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/hub-token");
}

QString save(const QString &token)
{
    return saveAt(path(), token);
}

QString saveAt(const QString &file, const QString &secret)
{
    const QString target = file;
    const QString clean = secret.trimmed();
    if (clean.isEmpty()) {
        if (QFile::exists(target) && !QFile::remove(target))
            return QStringLiteral("could not remove %1").arg(QDir::toNativeSeparators(target));
        return {};
    }
    if (!QDir().mkpath(QFileInfo(target).absolutePath()))
        return QStringLiteral("could not create %1").arg(QDir::toNativeSeparators(QFileInfo(target).absolutePath()));
    const QString temp = target + QStringLiteral(".new");
    QFile::remove(temp);
    QFile f(temp);
    if (!f.open(QIODevice::WriteOnly | QIODevice::NewOnly, kOwnerOnly))
        return QStringLiteral("could not write %1: %2").arg(QDir::toNativeSeparators(temp), f.errorString());
    const QByteArray bytes = clean.toUtf8() + '\n';
    const bool written = f.write(bytes) == bytes.size() && f.flush();
    f.close();
    if (!written) {
        QFile::remove(temp);
        return QStringLiteral("could not write %1 (disk full?)").arg(QDir::toNativeSeparators(temp));
    }
    QFile::remove(target);
    if (!QFile::rename(temp, target)) {
        QFile::remove(temp);
        return QStringLiteral("could not replace %1").arg(QDir::toNativeSeparators(target));
    }
    return {};
}

QString load()
{
    QSettings settings;
    const QString legacy = settings.value(kLegacyKey).toString().trimmed();
    if (!legacy.isEmpty() && save(legacy).isEmpty())
        settings.remove(kLegacyKey); // moved: the settings file no longer holds it
    const QString saved = loadFrom(path());
    return saved.isEmpty() ? legacy : saved; // none saved (or the move failed: use it from the settings this time)
}

QString loadFrom(const QString &file)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    if (f.permissions() & ~(kOwnerOnly | QFile::ReadUser | QFile::WriteUser))
        f.setPermissions(kOwnerOnly); // a copy restored with looser rights is tightened again
    return QString::fromUtf8(f.readAll()).trimmed();
}

} // namespace tokenstore
