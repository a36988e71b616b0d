// The local library for the Models page: every folder in the models folder that holds a
// downloaded source (config.json / *.safetensors) or a converted container (manifest.json),
// with its size. Scanning and deleting run on a pool thread; the model changes on the GUI
// thread only. Deleting refuses anything that is not directly inside the models folder, the
// open model, and a download in progress; its owner tells it which those are (openModelPath,
// downloadFolder). The list follows the disk by itself: the folder is created when missing
// and watched (with each model folder in it), so a finished download or conversion appears
// without Refresh. Containers outside the folder (the demo, one opened from elsewhere) are
// listed too (extraPaths), and the open one is marked.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QFileSystemWatcher>
#include <QFutureWatcher>
#include <QTimer>
#include <QQmlEngine>

class ModelLibrary : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString folder READ folder WRITE setFolder NOTIFY folderChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(qint64 totalBytes READ totalBytes NOTIFY countChanged)
    // The model open in the engine, and the folder an unfinished download writes into ("": none).
    Q_PROPERTY(QString openModelPath READ openModelPath WRITE setOpenModelPath NOTIFY blockersChanged)
    // Containers to list although they are not in the folder (the demo, the open model).
    Q_PROPERTY(QStringList extraPaths READ extraPaths WRITE setExtraPaths NOTIFY extraPathsChanged)
    Q_PROPERTY(QString downloadFolder MEMBER m_downloadFolder NOTIFY blockersChanged)

public:
    enum Role { NameRole = Qt::UserRole + 1, PathRole, KindRole, BytesRole, FileCountRole, ModifiedRole, CanOpenRole, CanConvertRole,
                BudgetTextRole, // a container's own RAM budget, in words
                IsOpenRole, OutsideRole };
    Q_ENUM(Role)

    struct Entry {
        QString name;
        QString path;
        QString kind; // "container", "source", "partial download", "remote" (library/remotelibrary.h)
        bool outside = false; // listed from extraPaths, not in the folder
        qint64 bytes = 0;
        int files = 0;
        QDateTime modified;
    };

    explicit ModelLibrary(QObject *parent = nullptr);
    ~ModelLibrary() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString folder() const { return m_folder; }
    void setFolder(const QString &folder);
    bool busy() const { return m_scan.isRunning() || m_delete.isRunning(); }
    QString openModelPath() const { return m_openModelPath; }
    void setOpenModelPath(const QString &path);
    QStringList extraPaths() const { return m_extraPaths; }
    void setExtraPaths(const QStringList &paths);
    qint64 totalBytes() const;

    Q_INVOKABLE void refresh();
    // Deletes one entry (a folder directly inside the models folder). Answers with removed().
    Q_INVOKABLE void remove(const QString &path);
    // Why path may not be deleted now (open in the engine, being downloaded), or "".
    Q_INVOKABLE QString removeBlocker(const QString &path) const;

    // Blocking scan of one folder (and the extra containers); public for tests.
    static QList<Entry> scan(const QString &folder, const QStringList &extras = {});

Q_SIGNALS:
    void folderChanged();
    void countChanged();
    void busyChanged();
    void removed(const QString &path, qint64 bytesFreed, const QString &error);
    void blockersChanged();
    void extraPathsChanged();

private:
    struct DeleteOutcome {
        QString path;
        qint64 bytes = 0;
        QString error;
    };
    QString m_folder;
    QString m_openModelPath;
    QString m_downloadFolder;
    QStringList m_extraPaths;
    QFileSystemWatcher m_watcher;
    QTimer m_settle; // a burst of changes (a conversion writing) gives one rescan
    void watch();
    QList<Entry> m_entries;
    QFutureWatcher<QList<Entry>> m_scan;
    QFutureWatcher<DeleteOutcome> m_delete;
    bool m_rescan = false;
};
