#include "download/downloadfilemodel.h"

DownloadFileModel::DownloadFileModel(QObject *parent) : QAbstractListModel(parent) {}

int DownloadFileModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_files.size());
}

QVariant DownloadFileModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const FileSnapshot &f = m_files.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case PathRole: return f.path;
    case SizeRole: return f.size;
    case StateRole: return int(f.state);
    case ReasonRole: return f.reason;
    case DetailRole: return f.detail;
    case ChecksumRole: return f.checksum;
    case OnDiskRole: return f.onDisk;
    case TransferredRole: return f.transferred;
    case VerifiedRole: return f.verified;
    case ProgressRole: return f.size > 0 ? static_cast<double>(f.onDisk) / f.size : (f.state == FileState::Done ? 1.0 : 0.0);
    case SpeedRole: return f.speed;
    case EtaRole: return f.etaSeconds;
    case RetriesRole: return f.retries;
    default: return {};
    }
}

QHash<int, QByteArray> DownloadFileModel::roleNames() const
{
    return {{PathRole, "path"},         {SizeRole, "size"},       {StateRole, "fileState"},
            {ReasonRole, "reason"},     {DetailRole, "detail"},   {ChecksumRole, "checksum"},
            {OnDiskRole, "onDisk"},     {TransferredRole, "transferred"}, {VerifiedRole, "verified"},
            {ProgressRole, "progress"}, {SpeedRole, "speed"},     {EtaRole, "eta"},
            {RetriesRole, "retries"}};
}

void DownloadFileModel::apply(const QList<FileSnapshot> &files)
{
    bool samePaths = files.size() == m_files.size();
    for (qsizetype i = 0; samePaths && i < files.size(); ++i)
        samePaths = files[i].path == m_files[i].path;
    if (!samePaths) {
        const bool countChange = files.size() != m_files.size();
        beginResetModel();
        m_files = files;
        endResetModel();
        if (countChange)
            Q_EMIT countChanged();
        return;
    }
    // Signal runs of changed rows.
    qsizetype first = -1;
    for (qsizetype i = 0; i <= files.size(); ++i) {
        const bool differs = i < files.size() && !(files[i] == m_files[i]);
        if (differs) {
            m_files[i] = files[i];
            if (first < 0)
                first = i;
        } else if (first >= 0) {
            Q_EMIT dataChanged(index(static_cast<int>(first)), index(static_cast<int>(i - 1)));
            first = -1;
        }
    }
}
