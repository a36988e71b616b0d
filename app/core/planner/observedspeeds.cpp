#include "planner/observedspeeds.h"

#include <waste/calibration.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <algorithm>
#include <vector>

namespace {

QString machineKey()
{
    return QString::fromStdString(waste::calibrationMachineKey(0));
}

QJsonObject readAll(const QString &file)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    return o.value(QStringLiteral("machine")).toString() == machineKey() ? o : QJsonObject{};
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 1;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

ObservedSpeeds::ObservedSpeeds(QString file) : m_file(std::move(file)) {}

ObservedRun ObservedSpeeds::measured(qint64 budget, qint64 decodeTokens, double decodeTokPerS, qint64 promptTokens,
                                     double promptSeconds)
{
    ObservedRun run;
    run.budget = budget;
    if (decodeTokens >= kMinDecodeTokens)
        run.decodeTokPerS = decodeTokPerS;
    if (promptTokens >= kMinPrefillTokens && promptSeconds > 0)
        run.prefillTokPerS = double(promptTokens) / promptSeconds;
    return run;
}

void ObservedSpeeds::record(const QString &container, const ObservedRun &run)
{
    if (container.isEmpty() || (run.decodeTokPerS <= 0 && run.prefillTokPerS <= 0))
        return;
    QJsonObject all = readAll(m_file);
    QJsonObject models = all.value(QStringLiteral("models")).toObject();
    const QString key = QFileInfo(container).absoluteFilePath();
    QJsonArray list = models.value(key).toArray();
    list.append(QJsonObject{{QStringLiteral("budget"), run.budget},
                            {QStringLiteral("decode_tok_per_s"), run.decodeTokPerS},
                            {QStringLiteral("prefill_tok_per_s"), run.prefillTokPerS}});
    while (list.size() > kKept)
        list.removeFirst();
    models.insert(key, list);
    all.insert(QStringLiteral("machine"), machineKey());
    all.insert(QStringLiteral("models"), models);
    QDir().mkpath(QFileInfo(m_file).absolutePath());
    QSaveFile f(m_file);
    if (f.open(QIODevice::WriteOnly)) {
        f.write(QJsonDocument(all).toJson(QJsonDocument::Compact));
        f.commit();
    }
}

QList<ObservedRun> ObservedSpeeds::runs(const QString &container) const
{
    const QJsonArray list = readAll(m_file)
                                .value(QStringLiteral("models"))
                                .toObject()
                                .value(QFileInfo(container).absoluteFilePath())
                                .toArray();
    QList<ObservedRun> out;
    for (const QJsonValue &v : list) {
        const QJsonObject o = v.toObject();
        out << ObservedRun{o.value(QStringLiteral("budget")).toInteger(), o.value(QStringLiteral("decode_tok_per_s")).toDouble(),
                           o.value(QStringLiteral("prefill_tok_per_s")).toDouble()};
    }
    return out;
}

ObservedSpeeds::Correction ObservedSpeeds::correction(const QList<ObservedRun> &runs,
                                                      const std::function<double(qint64)> &predictedDecode,
                                                      const std::function<double(qint64)> &predictedPrefill)
{
    std::vector<double> decode, prefill;
    for (const ObservedRun &r : runs) {
        const double d = r.decodeTokPerS > 0 ? predictedDecode(r.budget) : 0;
        if (d > 0)
            decode.push_back(r.decodeTokPerS / d);
        const double p = r.prefillTokPerS > 0 ? predictedPrefill(r.budget) : 0;
        if (p > 0)
            prefill.push_back(r.prefillTokPerS / p);
    }
    Correction c;
    c.decodeRuns = int(decode.size());
    c.prefillRuns = int(prefill.size());
    c.decode = median(decode);
    c.prefill = median(prefill);
    return c;
}
