#include "library/modellibrary.h"

#include "library/remotelibrary.h"
#include "remote/remotestore.h"
#include "settings/appsettings.h"
#include "units/units.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

ModelLibrary::ModelLibrary(QObject *parent) : QAbstractListModel(parent)
{
    m_settle.setSingleShot(true);
    m_settle.setInterval(250);
    connect(&m_settle, &QTimer::timeout, this, &ModelLibrary::refresh);
    connect(&m_watcher, &QFileSystemWatcher::directoryChanged, &m_settle, qOverload<>(&QTimer::start));
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
        watch();
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
    case IsOpenRole:
        return !m_openModelPath.isEmpty() && QDir::cleanPath(e.path) == QDir::cleanPath(m_openModelPath);
    case OutsideRole: return e.outside;
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
            {BudgetTextRole, "budgetText"}, {IsOpenRole, "isOpen"},   {OutsideRole, "outside"}};
}

void ModelLibrary::setFolder(const QString &folder)
{
    if (folder == m_folder)
        return;
    m_folder = folder;
    // The folder downloads and conversions go to: there from the start, so a person who
    // opens it (or a file dialog starting in it) finds it.
    if (!folder.isEmpty())
        QDir().mkpath(folder);
    Q_EMIT folderChanged();
    refresh();
}

void ModelLibrary::setOpenModelPath(const QString &path)
{
    if (path == m_openModelPath)
        return;
    m_openModelPath = path;
    Q_EMIT blockersChanged();
    if (!m_entries.isEmpty())
        Q_EMIT dataChanged(index(0), index(rowCount() - 1), {IsOpenRole});
}

void ModelLibrary::setExtraPaths(const QStringList &paths)
{
    if (paths == m_extraPaths)
        return;
    m_extraPaths = paths;
    Q_EMIT extraPathsChanged();
    refresh();
}

void ModelLibrary::watch()
{
    // The folder itself (new, renamed, deleted entries) and every folder in it, models or
    // not yet (a conversion's folder gets its manifest.json last; a download renames its
    // .part files at the end).
    QStringList paths{m_folder};
    if (!m_folder.isEmpty())
        for (const QFileInfo &d : QDir(m_folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
            paths << d.absoluteFilePath();
    const QStringList old = m_watcher.directories();
    QStringList gone, added;
    for (const QString &p : old)
        if (!paths.contains(p))
            gone << p;
    for (const QString &p : std::as_const(paths))
        if (!p.isEmpty() && !old.contains(p) && QFileInfo(p).isDir())
            added << p;
    if (!gone.isEmpty())
        m_watcher.removePaths(gone);
    if (!added.isEmpty())
        m_watcher.addPaths(added);
}

qint64 ModelLibrary::totalBytes() const
{
    qint64 n = 0;
    for (const Entry &e : m_entries)
        n += e.bytes;
    return n;
}

namespace {

// The containers named in extras that are not in the folder, each once, marked outside.
void appendExtras(QList<ModelLibrary::Entry> &out, const QString &folder, const QStringList &extras)
{
    using Entry = ModelLibrary::Entry;
    const QString root = folder.isEmpty() ? QString() : QDir(folder).canonicalPath();
    for (const QString &x : extras) {
        const QFileInfo d(x);
        // Only containers (those in the folder are listed from it anyway), once each.
        if (x.isEmpty() || !d.isDir() || !QFileInfo::exists(d.absoluteFilePath() + QStringLiteral("/manifest.json")))
            continue;
        if (!root.isEmpty() && QFileInfo(d.absolutePath()).canonicalFilePath() == root)
            continue;
        if (std::any_of(out.cbegin(), out.cend(), [&](const Entry &e) { return e.path == d.absoluteFilePath(); }))
            continue;
        Entry e;
        e.name = d.fileName();
        e.path = d.absoluteFilePath();
        e.kind = QStringLiteral("container");
        e.outside = true;
        QDirIterator it(e.path, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            it.next();
            e.bytes += it.fileInfo().size();
            ++e.files;
        }
        out.append(e);
    }
}

} // namespace

QList<ModelLibrary::Entry> ModelLibrary::scan(const QString &folder, const QStringList &extras)
{
    QList<Entry> out;
    const QDir root(folder);
    for (const QFileInfo &d : folder.isEmpty() ? QFileInfoList() : root.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name | QDir::IgnoreCase)) {
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
    appendExtras(out, folder, extras);
    return out;
}

void ModelLibrary::refresh()
{
    if (m_scan.isRunning()) {
        m_rescan = true;
        return;
    }
    const QString folder = m_folder;
    const QStringList extras = m_extraPaths;
    m_scan.setFuture(QtConcurrent::run([folder, extras] { return scan(folder, extras) + remotelibrary::entries(); }));
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
