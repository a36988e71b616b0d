#include "prompt/mediablock.h"

#include <waste/chat.hpp>

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
    QString block;
    try {
        block = QString::fromStdString(waste::imageMediaBlock(path.toStdString()));
    } catch (const std::exception &e) {
        throw std::runtime_error(e.what());
    }
    QMutexLocker lock(&mutex);
    if (cache.size() > 256)
        cache.clear();
    cache.insert(key, block);
    return block;
}
