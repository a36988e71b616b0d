// The local library for the Models page: every folder in the models folder that holds a
// downloaded source (config.json / *.safetensors) or a converted container (manifest.json),
// with its size. Scanning and deleting run on a pool thread; the model changes on the GUI
// thread only. Deleting refuses anything that is not directly inside the models folder, the
// open model, and a download in progress; its owner tells it which those are (openModelPath,
// downloadFolder).
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QFutureWatcher>
#include <QQmlEngine>

class ModelLibrary : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString folder READ folder WRITE setFolder NOTIFY folderChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(qint64 totalBytes READ totalBytes NOTIFY countChanged)
    // The model open in the engine, and the folder an unfinished download writes into ("": none).
    Q_PROPERTY(QString openModelPath MEMBER m_openModelPath NOTIFY blockersChanged)
    Q_PROPERTY(QString downloadFolder MEMBER m_downloadFolder NOTIFY blockersChanged)

public:
    enum Role { NameRole = Qt::UserRole + 1, PathRole, KindRole, BytesRole, FileCountRole, ModifiedRole, CanOpenRole, CanConvertRole,
                BudgetTextRole }; // BudgetTextRole: a container's own RAM budget, in words
    Q_ENUM(Role)

    struct Entry {
        QString name;
        QString path;
        QString kind; // "container", "source", "partial download", "remote" (remote/remotelibrary.h)
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
    qint64 totalBytes() const;

    Q_INVOKABLE void refresh();
    // Deletes one entry (a folder directly inside the models folder). Answers with removed().
    Q_INVOKABLE void remove(const QString &path);
    // Why path may not be deleted now (open in the engine, being downloaded), or "".
    Q_INVOKABLE QString removeBlocker(const QString &path) const;

    // Blocking scan of one folder; public for tests.
    static QList<Entry> scan(const QString &folder);

Q_SIGNALS:
    void folderChanged();
    void countChanged();
    void busyChanged();
    void removed(const QString &path, qint64 bytesFreed, const QString &error);
    void blockersChanged();

private:
    struct DeleteOutcome {
        QString path;
        qint64 bytes = 0;
        QString error;
    };
    QString m_folder;
    QString m_openModelPath;
    QString m_downloadFolder;
    QList<Entry> m_entries;
    QFutureWatcher<QList<Entry>> m_scan;
    QFutureWatcher<DeleteOutcome> m_delete;
    bool m_rescan = false;
};
