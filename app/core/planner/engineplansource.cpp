#include "planner/engineplansource.h"

#include <waste/waste.hpp>

#include <QDir>
#include <QObject>
#include <QFileInfo>
#include <QStandardPaths>
#include <QStorageInfo>

#include <map>
#include <vector>

namespace {

waste::MemoryPlan enginePlan(const QString &container, int ctx, const std::optional<MachineOverride> &machine)
{
    waste::MemoryPlan p = waste::planMemory(QFileInfo(container).absoluteFilePath().toStdString(), ctx);
    if (machine) {
        p.physical_ram_bytes = machine->physical;
        p.usable_ram_bytes = machine->usable > 0 ? machine->usable : machine->physical;
        p.cap_bytes = p.usable_ram_bytes - p.usable_ram_bytes / 8;
        p.other_process_bytes = machine->other;
        p.cliff_bytes = waste::pagingCliff(p.physical_ram_bytes, p.usable_ram_bytes, p.other_process_bytes);
    }
    return p;
}

} // namespace

EnginePlanSource::EnginePlanSource(std::optional<MachineOverride> machine) : m_machine(machine) {}

PlanFacts planFactsOf(const waste::MemoryPlan &p)
{
    PlanFacts f;
    f.ctx = p.ctx;
    f.trunk = p.trunk_bytes;
    f.state = p.state_bytes;
    f.scratch = p.scratch_bytes;
    f.minExpertCache = p.min_expert_cache;
    f.vision = p.vision_bytes;
    f.floor = p.floor_bytes;
    f.recommended = p.recommended_bytes;
    f.workingSet = p.working_set_bytes;
    f.defaultBudget = waste::resolveBudget(p, 0).budget_bytes;
    f.physical = p.physical_ram_bytes;
    f.usable = p.usable_ram_bytes;
    f.cap = p.cap_bytes;
    f.other = p.other_process_bytes;
    f.cliff = p.cliff_bytes;
    f.maxRecord = p.max_record_bytes;
    f.checkpoint = p.checkpoint_bytes;
    f.expertBytes = p.expert_bytes_total;
    f.passFloor = p.pass_floor_bytes;
    f.passFixed = p.pass_fixed_bytes;
    f.passPieceToken = p.pass_piece_token_bytes;
    f.passToken = p.pass_token_bytes;
    return f;
}

PlanFacts EnginePlanSource::plan(const QString &container, int ctxTokens)
{
    return planFactsOf(enginePlan(container, ctxTokens, m_machine));
}

CalibrationReport calibrationReportOf(const waste::ComputeCalibration &c)
{
    CalibrationReport r;
    r.text = QObject::tr("Compute measured on %1 (a %2 s run of the engine's kernels).")
                 .arg(QString::fromStdString(c.machine))
                 .arg(c.seconds, 0, 'f', 1);
    if (!c.decodeScaleError.empty())
        r.warning = QObject::tr("The decode itself could not be measured (%1), so compute is priced by the kernels "
                                "alone and the tokens/s shown are likely too high. Free space in the temporary "
                                "folder, then press Measure compute.")
                        .arg(QString::fromStdString(c.decodeScaleError));
    return r;
}

QString EnginePlanSource::calibrationFile()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) +
           QStringLiteral("/waste/compute-calibration.json");
}

waste::ComputeCalibration EnginePlanSource::calibration(bool rerun)
{
    std::lock_guard lock(m_mutex);
    if (!m_calibration || rerun)
        m_calibration = waste::cachedCalibration(QDir::toNativeSeparators(calibrationFile()).toStdString(), rerun);
    return *m_calibration;
}

CalibrationReport EnginePlanSource::calibrate(bool rerun)
{
    return calibrationReportOf(calibration(rerun));
}

QList<ForecastPoint> EnginePlanSource::forecast(const QString &container, const PlanFacts &facts,
                                                const QList<qint64> &budgets, const DiskMeasurement &disk)
{
    const waste::MemoryPlan p = enginePlan(container, int(facts.ctx), m_machine);
    waste::ForecastInputs in;
    in.diskGBps = disk.gbPerSecond;
    in.decodeDiskGBps = disk.decodeGbPerSecond;
    in.readLatencySeconds = disk.latencySeconds;
    in.readCpuSeconds = disk.cpuSecondsPerRead;
    if (in.diskGBps <= 0 && m_machine && m_machine->diskGBps > 0)
        in.diskGBps = m_machine->diskGBps;
    if (in.diskGBps <= 0) {
        // Not measured on the page yet: measure once per container, not on every re-plan.
        std::optional<DiskMeasurement> known;
        {
            std::lock_guard lock(m_mutex);
            if (m_disks.contains(QString::fromStdString(p.container)))
                known = m_disks.value(QString::fromStdString(p.container));
        }
        const DiskMeasurement d = known ? *known : measureDisk(container);
        in.diskGBps = d.gbPerSecond;
        in.decodeDiskGBps = d.decodeGbPerSecond;
        in.readLatencySeconds = d.latencySeconds;
        in.readCpuSeconds = d.cpuSecondsPerRead;
    }
    const waste::ComputeCalibration cal = calibration(false);
    const waste::ComputeEstimate compute = waste::estimateComputePerToken(p.container, cal);
    in.computeSeconds = compute.seconds;
    in.computeOverlapSeconds = compute.overlapSeconds;
    in.routedExpertSeconds = compute.routedExpertSeconds;
    const std::vector<int64_t> list(budgets.begin(), budgets.end());
    const waste::Forecast fc = waste::forecastBudgets(p, list, in);
    QList<ForecastPoint> out;
    // The prompt's read time depends on the budget only through the pass size, which takes few
    // values along the chart, and whether the room holds MLA's expanded rows: each pair is
    // estimated once (the estimate reads the manifest).
    std::map<std::pair<int, bool>, waste::PrefillEstimate> prefillByPass;
    const auto estimate = [&](int pass, bool roomy) {
        const auto key = std::make_pair(pass, roomy);
        if (!prefillByPass.contains(key))
            prefillByPass[key] = waste::estimatePrefill(p.container, cal, kPlannerPromptTokens, pass, in.diskGBps,
                                                        roomy ? -1 : 0);
        return prefillByPass[key];
    };
    for (const waste::BudgetForecast &b : fc.budgets) {
        ForecastPoint point{b.budget_bytes, b.tok_per_s, b.hit_rate, b.past_cliff, b.compute_seconds_per_token,
                            b.io_seconds_per_token};
        if (b.budget_bytes >= p.floor_bytes) {
            const waste::ExpertCacheShare share = waste::expertCacheAt(p, b.budget_bytes);
            waste::PrefillEstimate e = estimate(share.pass_tokens, true);
            if (e.mlaExpandBytes > share.expand_room_bytes)
                e = estimate(share.pass_tokens, false);
            point.prefillSeconds = e.known ? e.seconds : 0;
        }
        out << point;
    }
    return out;
}

DiskMeasurement EnginePlanSource::measureDisk(const QString &container)
{
    const QString path = QFileInfo(container).absoluteFilePath();
    const waste::MemoryPlan p = enginePlan(path, 4096, std::nullopt);
    // Random whole-record reads across the model's expert banks with direct I/O, as many in
    // flight as the engine's reader threads, one alone for the latency, and the same beside
    // a decode kernel (waste::measureExpertReads).
    const waste::ExpertReadSpeed r = waste::measureExpertReads(p);
    DiskMeasurement d;
    d.gbPerSecond = r.gbps;
    d.decodeGbPerSecond = r.decode_gbps;
    d.latencySeconds = r.latency_seconds;
    d.cpuSecondsPerRead = r.compute_seconds_per_read;
    if (!r.direct_io)
        d.warning = QObject::tr("the page cache answered (no direct I/O here), so this is RAM speed, not the disk's");
    const QStorageInfo storage(path);
    d.disk = QString::fromUtf8(storage.device());
    if (d.disk.startsWith(QLatin1String("/dev/")))
        d.disk = d.disk.mid(5);
    std::lock_guard lock(m_mutex);
    m_disks.insert(QString::fromStdString(p.container), d);
    return d;
}
