// FilePicker: the app's file and folder chooser for QML, on top of QFileDialog.
//
// Why not QtQuick.Dialogs: Qt 6.4's non-native Quick FileDialog (what a desktop without a
// platform dialog gets) ignores a single click (Open then returns the folder's first file),
// cannot select several files, and draws the selected row white on pale blue. QFileDialog
// has none of these faults, uses the desktop's own dialog where there is one, and can be
// driven by a test offscreen like any widget.
#pragma once

#include <QFileDialog>
#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QStringList>

class FilePicker : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString title MEMBER m_title NOTIFY settingsChanged)
    Q_PROPERTY(Mode mode MEMBER m_mode NOTIFY settingsChanged)
    // Filters as QFileDialog reads them: "Images (*.png *.webp)".
    Q_PROPERTY(QStringList nameFilters MEMBER m_nameFilters NOTIFY settingsChanged)
    // The folder the dialog opens in ("": the last one used, else home).
    Q_PROPERTY(QString folder MEMBER m_folder NOTIFY settingsChanged)
    Q_PROPERTY(bool isOpen READ isOpen NOTIFY openChanged)

public:
    enum Mode { OpenFile, OpenFiles, OpenFolder };
    Q_ENUM(Mode)

    explicit FilePicker(QObject *parent = nullptr);
    ~FilePicker() override;

    bool isOpen() const { return m_dialog != nullptr; }
    // The dialog while it is open (tests drive it), else null.
    QFileDialog *dialog() const { return m_dialog; }

    // Shows the dialog and returns at once; accepted() or rejected() follows.
    Q_INVOKABLE void open();
    Q_INVOKABLE void close();

Q_SIGNALS:
    void settingsChanged();
    void openChanged();
    // Local paths, in the order the person selected them.
    void accepted(const QStringList &paths, const QList<QUrl> &urls);
    void rejected();

private:
    QString m_title;
    Mode m_mode = OpenFiles;
    QStringList m_nameFilters;
    QString m_folder;
    QString m_lastFolder;
    QPointer<QFileDialog> m_dialog;
};
