#include "download/downloadqueue.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <iterator>
#include <stdexcept>

namespace {
const char *const kFileStates[] = {"pending", "active", "paused", "verifying", "done", "failed"};
const char *const kJobStates[] = {"idle", "listing", "ready", "running", "paused", "done", "failed"};
} // namespace

QString fileStateName(FileState s)
{
    return QString::fromLatin1(kFileStates[static_cast<int>(s)]);
}

FileState fileStateFromName(const QString &name)
{
    for (int i = 0; i < int(std::size(kFileStates)); ++i)
        if (name == QLatin1String(kFileStates[i]))
            return static_cast<FileState>(i);
    return FileState::Pending;
}

QString jobStateName(JobState s)
{
    return QString::fromLatin1(kJobStates[static_cast<int>(s)]);
}

JobState jobStateFromName(const QString &name)
{
    for (int i = 0; i < int(std::size(kJobStates)); ++i)
        if (name == QLatin1String(kJobStates[i]))
            return static_cast<JobState>(i);
    return JobState::Ready;
}

namespace downloadqueue {

std::optional<DownloadJob> load(const QString &path)
{
    QFile f(path);
    if (!f.exists())
        return std::nullopt;
    if (!f.open(QIODevice::ReadOnly))
        throw std::runtime_error(QStringLiteral("cannot read the download queue %1: %2").arg(path, f.errorString()).toStdString());
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    const QJsonObject root = doc.object();
    if (err.error != QJsonParseError::NoError || root.value(QLatin1String("version")).toInt() != 1)
        throw std::runtime_error(QStringLiteral("the download queue %1 is damaged or from another version; delete it to start over")
                                     .arg(path).toStdString());
    const QJsonObject j = root.value(QLatin1String("job")).toObject();
    DownloadJob job;
    job.repo = j.value(QLatin1String("repo")).toString();
    job.revision = j.value(QLatin1String("revision")).toString();
    job.endpoint = j.value(QLatin1String("endpoint")).toString();
    job.dest = j.value(QLatin1String("dest")).toString();
    for (const QJsonValue &v : j.value(QLatin1String("include")).toArray())
        job.include << v.toString();
    job.countContainer = j.value(QLatin1String("countContainer")).toBool(true);
    job.state = jobStateFromName(j.value(QLatin1String("state")).toString());
    job.reason = j.value(QLatin1String("reason")).toString();
    for (const QJsonValue &v : j.value(QLatin1String("files")).toArray()) {
        const QJsonObject o = v.toObject();
        QueuedFile q;
        q.path = o.value(QLatin1String("path")).toString();
        q.size = o.value(QLatin1String("size")).toInteger();
        q.sha256 = o.value(QLatin1String("sha256")).toString();
        q.gitOid = o.value(QLatin1String("gitOid")).toString();
        q.state = fileStateFromName(o.value(QLatin1String("state")).toString());
        q.reason = o.value(QLatin1String("reason")).toString();
        q.etag = o.value(QLatin1String("etag")).toString().toLatin1();
        q.attempts = o.value(QLatin1String("attempts")).toInt();
        q.retries = o.value(QLatin1String("retries")).toInt();
        q.freshRetryUsed = o.value(QLatin1String("freshRetryUsed")).toBool();
        q.doneMtimeMs = o.value(QLatin1String("doneMtimeMs")).toInteger();
        job.files.push_back(q);
    }
    if (job.repo.isEmpty() || job.dest.isEmpty())
        throw std::runtime_error(QStringLiteral("the download queue %1 names no repository or folder; delete it to start over")
                                     .arg(path).toStdString());
    return job;
}

bool save(const QString &path, const DownloadJob &job, QString *error)
{
    QJsonArray files;
    for (const QueuedFile &q : job.files) {
        QJsonObject o{{QStringLiteral("path"), q.path},
                      {QStringLiteral("size"), q.size},
                      {QStringLiteral("state"), fileStateName(q.state)}};
        if (!q.sha256.isEmpty())
            o.insert(QStringLiteral("sha256"), q.sha256);
        if (!q.gitOid.isEmpty())
            o.insert(QStringLiteral("gitOid"), q.gitOid);
        if (!q.reason.isEmpty())
            o.insert(QStringLiteral("reason"), q.reason);
        if (!q.etag.isEmpty())
            o.insert(QStringLiteral("etag"), QString::fromLatin1(q.etag));
        if (q.attempts)
            o.insert(QStringLiteral("attempts"), q.attempts);
        if (q.retries)
            o.insert(QStringLiteral("retries"), q.retries);
        if (q.freshRetryUsed)
            o.insert(QStringLiteral("freshRetryUsed"), true);
        if (q.doneMtimeMs)
            o.insert(QStringLiteral("doneMtimeMs"), q.doneMtimeMs);
        files.append(o);
    }
    QJsonArray include;
    for (const QString &g : job.include)
        include.append(g);
    const QJsonObject j{{QStringLiteral("repo"), job.repo},
                        {QStringLiteral("revision"), job.revision},
                        {QStringLiteral("endpoint"), job.endpoint},
                        {QStringLiteral("dest"), job.dest},
                        {QStringLiteral("include"), include},
                        {QStringLiteral("countContainer"), job.countContainer},
                        {QStringLiteral("state"), jobStateName(job.state)},
                        {QStringLiteral("reason"), job.reason},
                        {QStringLiteral("files"), files}};
    const QJsonObject root{{QStringLiteral("version"), 1}, {QStringLiteral("job"), j}};

    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = QStringLiteral("cannot write the download queue %1: %2").arg(path, f.errorString());
        return false;
    }
    f.write(QJsonDocument(root).toJson(QJsonDocument::Indented));
    if (!f.commit()) {
        *error = QStringLiteral("cannot write the download queue %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

void remove(const QString &path)
{
    QFile::remove(path);
}

} // namespace downloadqueue
