#include "download/modellibrary.h"

#include "remote/remotelibrary.h"
#include "remote/remotestore.h"
#include "settings/appsettings.h"
#include "units/units.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

ModelLibrary::ModelLibrary(QObject *parent) : QAbstractListModel(parent)
{
    // Each container shows the budget kept for it; a budget applied on the Planner page shows at once.
    if (AppSettings *s = AppSettings::instance())
        connect(s, &AppSettings::changed, this, [this] {
            if (!m_entries.isEmpty())
                Q_EMIT dataChanged(index(0), index(int(m_entries.size()) - 1), {BudgetTextRole});
        });
    connect(&m_scan, &QFutureWatcherBase::finished, this, [this] {
        beginResetModel();
        m_entries = m_scan.result();
        endResetModel();
        Q_EMIT countChanged();
        Q_EMIT busyChanged();
        if (m_rescan) {
            m_rescan = false;
            refresh();
        }
    });
    connect(&m_delete, &QFutureWatcherBase::finished, this, [this] {
        const DeleteOutcome o = m_delete.result();
        Q_EMIT busyChanged();
        Q_EMIT removed(o.path, o.bytes, o.error);
        refresh();
    });
}

ModelLibrary::~ModelLibrary()
{
    m_scan.waitForFinished();
    m_delete.waitForFinished();
}

int ModelLibrary::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

QVariant ModelLibrary::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_entries.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case NameRole: return e.name;
    case PathRole: return e.path;
    case KindRole: return e.kind;
    case BytesRole: return e.bytes;
    case FileCountRole: return e.files;
    case ModifiedRole: return e.modified;
    case CanOpenRole: return e.kind == QLatin1String("container") || e.kind == QLatin1String("remote");
    case CanConvertRole: return e.kind == QLatin1String("source");
    case BudgetTextRole: {
        if (e.kind != QLatin1String("container"))
            return QString();
        const qint64 kept = AppSettings::instance() ? AppSettings::instance()->budgetFor(e.path) : 0;
        return kept > 0 ? tr("budget %1").arg(Units::bytes(kept)) : tr("default budget");
    }
    default: return {};
    }
}

QHash<int, QByteArray> ModelLibrary::roleNames() const
{
    return {{NameRole, "name"},           {PathRole, "path"},         {KindRole, "kind"},       {BytesRole, "bytes"},
            {FileCountRole, "fileCount"}, {ModifiedRole, "modified"}, {CanOpenRole, "canOpen"}, {CanConvertRole, "canConvert"},
            {BudgetTextRole, "budgetText"}};
}

void ModelLibrary::setFolder(const QString &folder)
{
    if (folder == m_folder)
        return;
    m_folder = folder;
    Q_EMIT folderChanged();
    refresh();
}

qint64 ModelLibrary::totalBytes() const
{
    qint64 n = 0;
    for (const Entry &e : m_entries)
        n += e.bytes;
    return n;
}

QList<ModelLibrary::Entry> ModelLibrary::scan(const QString &folder)
{
    QList<Entry> out;
    if (folder.isEmpty())
        return out;
    const QDir root(folder);
    for (const QFileInfo &d : root.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name | QDir::IgnoreCase)) {
        Entry e;
        e.name = d.fileName();
        e.path = d.absoluteFilePath();
        bool manifest = false, config = false, safetensors = false, parts = false;
        QDirIterator it(e.path, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            it.next();
            const QFileInfo f = it.fileInfo();
            e.bytes += f.size();
            ++e.files;
            if (!e.modified.isValid() || f.lastModified() > e.modified)
                e.modified = f.lastModified();
            const QString n = f.fileName();
            const bool top = f.absolutePath() == e.path;
            manifest |= top && n == QLatin1String("manifest.json");
            config |= top && n == QLatin1String("config.json");
            safetensors |= n.endsWith(QLatin1String(".safetensors"));
            parts |= n.endsWith(QLatin1String(".part"));
        }
        if (manifest)
            e.kind = QStringLiteral("container");
        else if (parts)
            e.kind = QStringLiteral("partial download");
        else if (config || safetensors)
            e.kind = QStringLiteral("source");
        else
            continue; // not a model
        out.append(e);
    }
    return out;
}

void ModelLibrary::refresh()
{
    if (m_scan.isRunning()) {
        m_rescan = true;
        return;
    }
    const QString folder = m_folder;
    m_scan.setFuture(QtConcurrent::run([folder] { return scan(folder) + remotelibrary::entries(); }));
    Q_EMIT busyChanged();
}

QString ModelLibrary::removeBlocker(const QString &path) const
{
    const QString clean = QDir::cleanPath(path);
    const QString open = QDir::cleanPath(m_openModelPath);
    if (!m_openModelPath.isEmpty() && (open == clean || open.startsWith(clean + QLatin1Char('/'))))
        return tr("This model is open. Close it first.");
    if (!m_downloadFolder.isEmpty() && QDir::cleanPath(m_downloadFolder) == clean)
        return tr("A download into this folder is in progress. Cancel it first.");
    return {};
}

void ModelLibrary::remove(const QString &path)
{
    if (remoteendpoint::isRemotePath(path)) { // forgets the engine and its key; nothing on disk
        const QString blocker = removeBlocker(path);
        if (blocker.isEmpty())
            remotestore::remove(remoteendpoint::idOf(path));
        Q_EMIT removed(path, 0, blocker);
        refresh();
        return;
    }
    const QFileInfo info(path);
    const QString parent = QFileInfo(info.absolutePath()).canonicalFilePath();
    const QString root = QFileInfo(m_folder).canonicalFilePath();
    QString error;
    if (root.isEmpty() || parent != root || !info.isDir() || info.isSymLink())
        error = tr("Only folders directly inside the models folder can be deleted here.");
    else if (m_delete.isRunning())
        error = tr("Another deletion is still running.");
    else
        error = removeBlocker(path);
    if (!error.isEmpty()) {
        Q_EMIT removed(path, 0, error);
        return;
    }
    const QString target = info.absoluteFilePath();
    m_delete.setFuture(QtConcurrent::run([target] {
        DeleteOutcome o;
        o.path = target;
        QDirIterator it(target, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            it.next();
            o.bytes += it.fileInfo().size();
        }
        if (!QDir(target).removeRecursively())
            o.error = QObject::tr("Could not delete everything in %1; check its permissions.").arg(target);
        return o;
    }));
    Q_EMIT busyChanged();
}
