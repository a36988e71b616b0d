#include "filepicker.h"

#include <QDir>
#include <QPalette>
#include <QFileDialog>
#include <QUrl>

#include <algorithm>
#include <cmath>

namespace {

double luminance(const QColor &c)
{
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

// The selected row's text against its background at least 4.5:1 (WCAG AA): the stock
// light palette's blue under white text is 3.6:1. The highlight is darkened (or, under
// dark text, lightened) until the text reads.
QPalette readableSelection(QPalette p)
{
    const QColor text = p.color(QPalette::Active, QPalette::HighlightedText);
    QColor back = p.color(QPalette::Active, QPalette::Highlight);
    const bool lightText = luminance(text) > 0.5;
    for (int i = 0; i < 20; ++i) {
        const double a = luminance(text), b = luminance(back);
        if ((std::max(a, b) + 0.05) / (std::min(a, b) + 0.05) >= 4.5)
            break;
        back = lightText ? back.darker(115) : back.lighter(115);
    }
    for (const QPalette::ColorGroup g : {QPalette::Active, QPalette::Inactive})
        p.setColor(g, QPalette::Highlight, back);
    return p;
}

} // namespace

FilePicker::FilePicker(QObject *parent) : QObject(parent) {}

FilePicker::~FilePicker()
{
    delete m_dialog.data();
}

void FilePicker::open()
{
    if (m_dialog) {
        m_dialog->raise();
        m_dialog->activateWindow();
        return;
    }
    const QString start = !m_folder.isEmpty() ? m_folder : !m_lastFolder.isEmpty() ? m_lastFolder : QDir::homePath();
    auto *dialog = new QFileDialog(nullptr, m_title, start);
    dialog->setObjectName(QStringLiteral("filePickerDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    switch (m_mode) {
    case OpenFile:
        dialog->setFileMode(QFileDialog::ExistingFile);
        break;
    case OpenFiles:
        dialog->setFileMode(QFileDialog::ExistingFiles);
        break;
    case OpenFolder:
        dialog->setFileMode(QFileDialog::Directory);
        dialog->setOption(QFileDialog::ShowDirsOnly);
        break;
    }
    if (m_mode != OpenFolder && !m_nameFilters.isEmpty())
        dialog->setNameFilters(m_nameFilters);
    dialog->setAcceptMode(QFileDialog::AcceptOpen);
    dialog->setPalette(readableSelection(dialog->palette()));
    // Not modal: the chat keeps streaming behind it, and it never blocks the event loop.
    connect(dialog, &QFileDialog::accepted, this, [this, dialog] {
        const QStringList files = dialog->selectedFiles();
        QList<QUrl> urls;
        for (const QString &f : files)
            urls << QUrl::fromLocalFile(f);
        m_lastFolder = dialog->directory().absolutePath();
        Q_EMIT accepted(files, urls);
    });
    connect(dialog, &QFileDialog::rejected, this, &FilePicker::rejected);
    connect(dialog, &QObject::destroyed, this, &FilePicker::openChanged);
    m_dialog = dialog;
    dialog->show();
    Q_EMIT openChanged();
}

void FilePicker::close()
{
    if (m_dialog)
        m_dialog->reject();
}
