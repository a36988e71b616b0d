#include "chat/imagecheck.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QImageWriter>
#include <QSet>

namespace {

QByteArray head(const QString &path, int bytes)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.read(bytes) : QByteArray();
}

// The formats stb_image reads in the engine, by their signatures.
bool stbSignature(const QByteArray &h, qint64 size)
{
    return h.startsWith("\x89PNG\r\n\x1a\n") || h.startsWith("\xff\xd8\xff") || h.startsWith("GIF87a")
           || h.startsWith("GIF89a") || (h.startsWith("BM") && size > 26);
}

// The name of an image format known by its signature, for the message when no plugin reads
// it ("" when the bytes are not an image format we know).
QString knownImageFormat(const QByteArray &h)
{
    if (h.startsWith("RIFF") && h.mid(8, 4) == "WEBP")
        return QStringLiteral("WebP");
    if (h.startsWith("II*\0") || h.startsWith(QByteArray("MM\0*", 4)))
        return QStringLiteral("TIFF");
    if (h.mid(4, 4) == "ftyp") {
        const QByteArray brand = h.mid(8, 4);
        if (brand == "avif" || brand == "avis")
            return QStringLiteral("AVIF");
        if (brand == "heic" || brand == "heix" || brand == "hevc" || brand == "heim" || brand == "heis"
            || brand == "mif1" || brand == "msf1")
            return QStringLiteral("HEIF");
    }
    if (h.startsWith("\xff\x0a") || h.startsWith(QByteArray("\0\0\0\x0cJXL ", 8)))
        return QStringLiteral("JPEG XL");
    if (h.startsWith("8BPS"))
        return QStringLiteral("Photoshop");
    return {};
}

QString tr(const char *text)
{
    return QCoreApplication::translate("imagecheck", text);
}

} // namespace

bool engineReadsImage(const QString &path)
{
    return stbSignature(head(path, 12), QFileInfo(path).size());
}

QString imageProblem(const QString &path)
{
    const QFileInfo info(path);
    const QString name = info.fileName();
    if (!info.exists() || !info.isFile())
        return tr("%1 could not be found.").arg(name.isEmpty() ? path : name);
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return tr("%1 could not be read: %2.").arg(name, f.errorString());
    const QByteArray h = f.read(16);
    f.close();
    if (stbSignature(h, info.size()))
        return {};
    // Qt's plugins judge by content too (the suffix only breaks ties).
    QImageReader reader(path);
    reader.setDecideFormatFromContent(true);
    if (reader.canRead())
        return {};
    if (const QString format = knownImageFormat(h); !format.isEmpty())
        return (format == QLatin1String("AVIF")
                    ? tr("%1 is an %2 image; this system has no %2 decoder. Save it as PNG or JPEG and attach that.")
                    : tr("%1 is a %2 image; this system has no %2 decoder. Save it as PNG or JPEG and attach that."))
            .arg(name, format);
    return tr("%1 is not an image (the formats that can be read: %2).").arg(name, readableImagePatterns());
}

QString decodeToPng(const QString &path, const QString &target)
{
    QImageReader reader(path);
    reader.setDecideFormatFromContent(true);
    // The picture as a person sees it: phones store rotation as metadata.
    reader.setAutoTransform(true);
    const QImage image = reader.read();
    if (image.isNull())
        return reader.errorString();
    QImageWriter writer(target, "png");
    if (!writer.write(image))
        return writer.errorString();
    return {};
}

QString readableImagePatterns()
{
    QStringList patterns;
    QSet<QString> seen;
    for (const QByteArray &format : QImageReader::supportedImageFormats()) {
        const QString suffix = QString::fromLatin1(format).toLower();
        if (seen.contains(suffix))
            continue;
        seen.insert(suffix);
        patterns << QStringLiteral("*.") + suffix;
    }
    return patterns.join(QLatin1Char(' '));
}
