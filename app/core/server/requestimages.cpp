#include "server/requestimages.h"

#include "prompt/mediablock.h"
#include "server/apierror.h"

#include <QCoreApplication>
#include <QFile>

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("ApiServer", text);
}
} // namespace

QString RequestImages::mediaBlock(const ContentPart &part)
{
    QString path = part.imagePath;
    if (!path.isEmpty()) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            throw ApiError::invalid(QStringLiteral("messages"), tr("Cannot read the image %1.").arg(path));
    } else {
        if (!m_dir)
            m_dir = std::make_unique<QTemporaryDir>();
        path = m_dir->filePath(QStringLiteral("image-%1").arg(m_paths.size()));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(part.imageData) != part.imageData.size())
            throw ApiError::server(tr("Cannot write a temporary image file to %1.").arg(path));
    }
    // The same media block as the chat page and the CLI: the size once decoded, EXIF
    // orientation applied, read from the header as the engine reads it.
    QString block;
    try {
        block = imageMediaBlock(path);
    } catch (const std::exception &e) {
        // The reason names the file; a data URL's temporary file means nothing to the client.
        const QString which = part.imagePath.isEmpty() ? tr("image %1 (data URL)").arg(m_paths.size() + 1)
                                                       : part.imagePath;
        throw ApiError::invalid(QStringLiteral("messages"), tr("An image could not be read: %1")
                                                                .arg(QString::fromStdString(e.what()).replace(path, which)));
    }
    m_paths << path;
    return block;
}
