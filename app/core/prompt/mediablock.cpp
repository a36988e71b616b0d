#include "prompt/mediablock.h"

#include "image/image_probe.hpp"
#include "model/vision_placement.hpp"

#include <QDateTime>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QMutexLocker>

#include <stdexcept>

QString imageMediaBlock(const QString &path)
{
    // Rendering runs for every send and every context-meter count: read each header once.
    static QMutex mutex;
    static QHash<QString, QString> cache;
    const QFileInfo info(path);
    const QString key = QStringLiteral("%1|%2|%3")
                            .arg(info.absoluteFilePath())
                            .arg(info.size())
                            .arg(info.lastModified().toMSecsSinceEpoch());
    {
        QMutexLocker lock(&mutex);
        if (const auto it = cache.constFind(key); it != cache.cend())
            return *it;
    }
    waste::image::ImageHeader h;
    try {
        h = waste::image::probeImageFile(path.toStdString());
    } catch (const std::exception &e) {
        throw std::runtime_error(e.what());
    }
    const QString block = QString::fromStdString(waste::vision::mediaBlockText(h.width, h.height));
    QMutexLocker lock(&mutex);
    if (cache.size() > 256)
        cache.clear();
    cache.insert(key, block);
    return block;
}
