#include "guihelpers.h"

#include "settings/appsettings.h"
#include "settings/datafolder.h"
#include "chat/markdownblocks.h"

#include <QClipboard>

#include <algorithm>
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
    const QString folder = (AppSettings::instance() ? AppSettings::instance()->dataFolder() : appDataFolder())
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

void GuiHelpers::ensureVisible(QQuickItem *item) const
{
    if (!item)
        return;
    for (QQuickItem *p = item->parentItem(); p; p = p->parentItem()) {
        // QQuickFlickable is private API: reach it through its properties.
        if (!p->inherits("QQuickFlickable"))
            continue;
        QQuickItem *content = p->property("contentItem").value<QQuickItem *>();
        if (!content || !content->isAncestorOf(item))
            continue;
        const QRectF r = item->mapRectToItem(content, QRectF(0, 0, item->width(), item->height()));
        const qreal viewHeight = p->height();
        const qreal y = p->property("contentY").toReal();
        const qreal originY = p->property("originY").toReal();
        const qreal maxY = originY + std::max<qreal>(0, p->property("contentHeight").toReal() - viewHeight);
        qreal target = y;
        if (r.top() < y)
            target = r.top();
        else if (r.bottom() > y + viewHeight)
            target = std::min(r.top(), r.bottom() - viewHeight);
        target = std::clamp(target, originY, maxY);
        if (!qFuzzyCompare(target + 1, y + 1))
            p->setProperty("contentY", target);
    }
}
