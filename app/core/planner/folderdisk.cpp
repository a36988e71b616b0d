#include "planner/folderdisk.h"

#include "library/modellibrary.h"

#include <waste/waste.hpp>

#include <QDir>
#include <QHash>
#include <QMutex>
#include <QObject>

FolderDisk measureModelsFolderDisk(const QString &modelsFolder, const QString &dataFolder)
{
    static QMutex mutex;
    static QHash<QString, FolderDisk> known;
    QMutexLocker lock(&mutex);
    if (known.contains(modelsFolder))
        return known.value(modelsFolder);
    FolderDisk d;
    qint64 bestBytes = -1;
    for (const QString &folder : {modelsFolder, dataFolder + QStringLiteral("/demo")})
        for (const ModelLibrary::Entry &e : ModelLibrary::scan(folder))
            if (e.kind == QLatin1String("container") && e.bytes > bestBytes) {
                d.container = e.path;
                bestBytes = e.bytes;
            }
    if (d.container.isEmpty()) {
        d.why = QObject::tr("no container in %1 to read").arg(QDir::toNativeSeparators(modelsFolder));
    } else {
        try {
            const waste::ExpertReadSpeed r =
                waste::measureExpertReads(waste::planMemory(QDir(d.container).absolutePath().toStdString()));
            d.gbPerSecond = r.gbps;
            d.decodeGbPerSecond = r.decode_gbps;
            d.cpuSecondsPerRead = r.compute_seconds_per_read;
        } catch (const std::exception &e) {
            d.why = QObject::tr("%1 could not be read: %2").arg(QDir::toNativeSeparators(d.container), QString::fromUtf8(e.what()));
        }
    }
    known.insert(modelsFolder, d);
    return d;
}
