#include "engine/savedstate.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <algorithm>
#include <utility>
#include <stdexcept>

namespace savedstate {
namespace {

constexpr int kRecordVersion = 1;
const QString kRecordSuffix = QStringLiteral(".json");

QString fileStamp(const QString &path)
{
    const QFileInfo f(path);
    return QStringLiteral("%1@%2").arg(f.size()).arg(f.lastModified().toMSecsSinceEpoch());
}

} // namespace

QString modelIdentity(const QString &containerPath, int ctxTokens, bool trainedRounding)
{
    const QString dir = QFileInfo(containerPath).absoluteFilePath();
    return QStringLiteral("%1|ctx %2|manifest %3|trunk %4")
               .arg(dir)
               .arg(ctxTokens)
               .arg(fileStamp(dir + QStringLiteral("/manifest.json")), fileStamp(dir + QStringLiteral("/trunk.bin"))) +
           (trainedRounding ? QStringLiteral("|trained rounding") : QString());
}

void save(waste::Model &model, const QString &path, const StateHistory &history, const QString &identity,
          const QJsonObject &extra, waste::SavedParts parts, int position)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    // The old record goes first: a crash between the two writes leaves no record, not a
    // record that describes another state.
    QFile::remove(path + kRecordSuffix);
    waste::saveState(model, path.toStdString(), parts);
    const QJsonObject record{{QStringLiteral("version"), kRecordVersion},
                             {QStringLiteral("model"), identity},
                             {QStringLiteral("position"), position >= 0 ? position : model.position()},
                             {QStringLiteral("history"), history.toJson()},
                             {QStringLiteral("extra"), extra}};
    QSaveFile f(path + kRecordSuffix);
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(record).toJson(QJsonDocument::Compact)) < 0 || !f.commit())
        throw std::runtime_error(QStringLiteral("%1: cannot write the state record (%2)")
                                     .arg(f.fileName(), f.errorString())
                                     .toStdString());
}

std::optional<Record> readRecord(const QString &path, const QString &identity)
{
    if (!QFileInfo::exists(path))
        return std::nullopt;
    QFile f(path + kRecordSuffix);
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QJsonObject record = QJsonDocument::fromJson(f.readAll()).object();
    if (record.value(QStringLiteral("version")).toInt() != kRecordVersion
        || record.value(QStringLiteral("model")).toString() != identity)
        return std::nullopt;
    std::optional<StateHistory> history = StateHistory::fromJson(record.value(QStringLiteral("history")).toArray());
    if (!history)
        return std::nullopt;
    return Record{std::move(*history), record.value(QStringLiteral("position")).toInt(-1),
                  record.value(QStringLiteral("extra")).toObject()};
}

void remove(const QString &path)
{
    QFile::remove(path + kRecordSuffix);
    QFile::remove(path);
}

void prune(const QString &dir, int keep)
{
    const QFileInfoList states = QDir(dir).entryInfoList({QStringLiteral("*.state")}, QDir::Files, QDir::Time);
    int kept = 0;
    for (const QFileInfo &state : states) {
        if (kept < keep && QFileInfo::exists(state.absoluteFilePath() + kRecordSuffix))
            ++kept;
        else
            remove(state.absoluteFilePath());
    }
}

} // namespace savedstate
