// GuiHelpers: small GUI-only services for QML: the clipboard (copy text, paste images),
// file URLs for thumbnails, and Markdown blocks for the message view.
#pragma once

#include <QObject>
#include <QQuickItem>
#include <QQmlEngine>
#include <QUrl>
#include <QVariantList>

class GuiHelpers : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
public:
    explicit GuiHelpers(QObject *parent = nullptr);

    Q_INVOKABLE void copyText(const QString &text) const;
    // Files or an image on the clipboard, as local file URLs (a pasted bitmap is saved as
    // a PNG in the data folder first). Empty when the clipboard holds neither.
    Q_INVOKABLE QList<QUrl> clipboardImages() const;
    Q_INVOKABLE bool clipboardHasImage() const;
    Q_INVOKABLE QUrl fileUrl(const QString &path) const { return QUrl::fromLocalFile(path); }
    Q_INVOKABLE QString fileName(const QString &path) const;
    // Scrolls every Flickable (ScrollView, ListView) around item so that item is in view: a
    // control reached by Tab must be seen.
    Q_INVOKABLE void ensureVisible(QQuickItem *item) const;
    // [{code: bool, language, text}] for MessageView.
    Q_INVOKABLE QVariantList markdownBlocks(const QString &markdown) const;
};
