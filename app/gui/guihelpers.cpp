#include "guihelpers.h"

#include "settings/appsettings.h"
#include "chat/markdownblocks.h"

#include <QClipboard>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QMimeData>
#include <QStandardPaths>

GuiHelpers::GuiHelpers(QObject *parent) : QObject(parent) {}

void GuiHelpers::copyText(const QString &text) const
{
    QGuiApplication::clipboard()->setText(text);
}

bool GuiHelpers::clipboardHasImage() const
{
    const QMimeData *mime = QGuiApplication::clipboard()->mimeData();
    return mime && (mime->hasImage() || mime->hasUrls());
}

QList<QUrl> GuiHelpers::clipboardImages() const
{
    const QMimeData *mime = QGuiApplication::clipboard()->mimeData();
    if (!mime)
        return {};
    if (mime->hasUrls())
        return mime->urls();
    if (!mime->hasImage())
        return {};
    const QImage image = qvariant_cast<QImage>(mime->imageData());
    if (image.isNull())
        return {};
    const QString folder = (AppSettings::instance() ? AppSettings::instance()->dataFolder()
                                                    : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                           + QStringLiteral("/pasted");
    QDir().mkpath(folder);
    const QString path =
        folder + QStringLiteral("/pasted-%1.png").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss-zzz")));
    if (!image.save(path, "PNG"))
        return {};
    return {QUrl::fromLocalFile(path)};
}

QString GuiHelpers::fileName(const QString &path) const
{
    return QFileInfo(path).fileName();
}

QVariantList GuiHelpers::markdownBlocks(const QString &markdown) const
{
    QVariantList out;
    for (const MarkdownBlock &b : splitMarkdownBlocks(markdown))
        out << QVariantMap{{QStringLiteral("code"), b.code},
                           {QStringLiteral("language"), b.language},
                           {QStringLiteral("text"), b.text}};
    return out;
}
