#include "planner/releaseplansource.h"

#include "planner/engineplansource.h"
#include "planner/folderdisk.h"

#include <waste/calibration.hpp>
#include <waste/release_plan.hpp>

#include <QDir>
#include <QObject>

namespace {

waste::ComputeCalibration calibration()
{
    return waste::cachedCalibration(QDir::toNativeSeparators(EnginePlanSource::calibrationFile()).toStdString());
}

} // namespace

waste::ForecastInputs forecastInputsOf(const waste::ReleaseLayout &layout, const FolderDisk &disk)
{
    waste::ForecastInputs in;
    in.diskGBps = disk.gbPerSecond;
    in.decodeDiskGBps = disk.decodeGbPerSecond;
    in.readCpuSeconds = disk.cpuSecondsPerRead;
    in.computeSeconds = layout.compute_seconds;
    in.computeOverlapSeconds = layout.compute_overlap_seconds;
    in.routedExpertSeconds = layout.compute_routed_seconds;
    return in;
}

void ReleasePlanSource::setRelease(const QByteArray &configJson, qint64 machineRam, const QString &modelsFolder,
                                   const QString &dataFolder)
{
    std::lock_guard lock(m_mutex);
    m_config = configJson.toStdString();
    m_ram = machineRam;
    m_models = modelsFolder;
    m_data = dataFolder;
}

PlanFacts ReleasePlanSource::plan(const QString &, int ctxTokens)
{
    std::string config;
    waste::ReleasePlanOptions o;
    {
        std::lock_guard lock(m_mutex);
        config = m_config;
        o.ramBytes = m_ram;
    }
    o.ctx = ctxTokens;
    return planFactsOf(waste::planRelease(config, o).convertDefault().plan);
}

QList<ForecastPoint> ReleasePlanSource::forecast(const QString &, const PlanFacts &facts, const QList<qint64> &budgets,
                                                 const DiskMeasurement &disk)
{
    std::string config;
    QString models, data;
    waste::ReleasePlanOptions o;
    {
        std::lock_guard lock(m_mutex);
        config = m_config;
        o.ramBytes = m_ram;
        models = m_models;
        data = m_data;
    }
    const waste::ComputeCalibration cal = calibration();
    o.ctx = int(facts.ctx);
    o.calibration = &cal;
    const waste::ReleasePlan rp = waste::planRelease(config, o);
    const waste::ReleaseLayout &made = rp.convertDefault();
    // The page's own measurement of the models folder's disk, else the folder's (once per process).
    FolderDisk read;
    read.gbPerSecond = disk.gbPerSecond;
    read.decodeGbPerSecond = disk.decodeGbPerSecond;
    read.cpuSecondsPerRead = disk.cpuSecondsPerRead;
    if (read.gbPerSecond <= 0)
        read = measureModelsFolderDisk(models, data);
    waste::ForecastInputs in = forecastInputsOf(made, read);
    in.readLatencySeconds = disk.latencySeconds;
    const waste::Forecast fc = waste::forecastBudgets(made.plan, std::vector<int64_t>(budgets.begin(), budgets.end()), in);
    QList<ForecastPoint> out;
    for (const waste::BudgetForecast &b : fc.budgets)
        out << ForecastPoint{b.budget_bytes, b.tok_per_s, b.hit_rate, b.past_cliff, b.compute_seconds_per_token,
                             b.io_seconds_per_token};
    return out;
}

DiskMeasurement ReleasePlanSource::measureDisk(const QString &)
{
    QString models, data;
    {
        std::lock_guard lock(m_mutex);
        models = m_models;
        data = m_data;
    }
    const FolderDisk f = measureModelsFolderDisk(models, data);
    DiskMeasurement d;
    d.gbPerSecond = f.gbPerSecond;
    d.decodeGbPerSecond = f.decodeGbPerSecond;
    d.cpuSecondsPerRead = f.cpuSecondsPerRead;
    d.warning = f.why;
    d.disk = f.container;
    return d;
}

CalibrationReport ReleasePlanSource::calibrate(bool) { return calibrationReportOf(calibration()); }
