// The files of the current download for QML: path, size, state, reason, progress, speed, ETA,
// retries. Fed whole snapshots by DownloadManager on the GUI thread; only rows that changed
// are signalled (a reset only when the set of files changes).
#pragma once

#include "download/downloadsnapshot.h"

#include <QAbstractListModel>
#include <QQmlEngine>

class DownloadFileModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("DownloadFileModel comes from DownloadManager.files")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Role {
        PathRole = Qt::UserRole + 1,
        SizeRole,
        StateRole,
        ReasonRole,
        DetailRole,
        ChecksumRole,
        OnDiskRole,
        TransferredRole,
        VerifiedRole,
        ProgressRole,
        SpeedRole,
        EtaRole,
        RetriesRole,
    };
    Q_ENUM(Role)

    explicit DownloadFileModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void apply(const QList<FileSnapshot> &files);
    const QList<FileSnapshot> &files() const { return m_files; }

Q_SIGNALS:
    void countChanged();

private:
    QList<FileSnapshot> m_files;
};
