#include "chat/imagecheck.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>

QString imageProblem(const QString &path)
{
    const QFileInfo info(path);
    const QString name = info.fileName();
    if (!info.exists() || !info.isFile())
        return QCoreApplication::translate("imagecheck", "%1 could not be found.").arg(name.isEmpty() ? path : name);
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QCoreApplication::translate("imagecheck", "%1 could not be read: %2.").arg(name, f.errorString());
    const QByteArray head = f.read(12);
    const bool png = head.startsWith("\x89PNG\r\n\x1a\n");
    const bool jpeg = head.startsWith("\xff\xd8\xff");
    const bool gif = head.startsWith("GIF87a") || head.startsWith("GIF89a");
    const bool bmp = head.startsWith("BM") && info.size() > 26;
    if (png || jpeg || gif || bmp)
        return {};
    return QCoreApplication::translate("imagecheck", "%1 is not an image the model can read (use PNG, JPEG, GIF or BMP).")
        .arg(name);
}
