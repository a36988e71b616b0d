#include "planner/engineplansource.h"

#include <waste/waste.hpp>

#include <QFileInfo>
#include <QStorageInfo>

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

PlanFacts EnginePlanSource::plan(const QString &container, int ctxTokens)
{
    const waste::MemoryPlan p = enginePlan(container, ctxTokens, m_machine);
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
    return f;
}

QList<ForecastPoint> EnginePlanSource::forecast(const QString &container, const PlanFacts &facts,
                                                const QList<qint64> &budgets, double diskGBps)
{
    const waste::MemoryPlan p = enginePlan(container, int(facts.ctx), m_machine);
    if (diskGBps <= 0 && m_machine && m_machine->diskGBps > 0)
        diskGBps = m_machine->diskGBps;
    const std::vector<int64_t> list(budgets.begin(), budgets.end());
    const waste::Forecast fc = waste::forecastBudgets(p, list, diskGBps);
    QList<ForecastPoint> out;
    for (const waste::BudgetForecast &b : fc.budgets)
        out << ForecastPoint{b.budget_bytes, b.tok_per_s, b.hit_rate, b.past_cliff};
    return out;
}

DiskMeasurement EnginePlanSource::measureDisk(const QString &container)
{
    const QString path = QFileInfo(container).absoluteFilePath();
    const waste::MemoryPlan p = enginePlan(path, 4096, std::nullopt);
    // The engine's forecast measures the disk when given no speed: random whole-record
    // reads of the first expert bank with direct I/O, the pattern decoding uses.
    const waste::Forecast fc = waste::forecastBudgets(p, {p.floor_bytes}, 0);
    DiskMeasurement d;
    d.gbPerSecond = fc.disk_gbps;
    const QStorageInfo storage(path);
    d.disk = QString::fromUtf8(storage.device());
    if (d.disk.startsWith(QLatin1String("/dev/")))
        d.disk = d.disk.mid(5);
    return d;
}
