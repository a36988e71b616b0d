// EnginePlanSource: the planner page's numbers from the engine's own planner
// (waste::planMemory, resolveBudget, forecastBudgets). A machine override shows the plan
// for another computer (tests use a fake 64 GB machine); the model's side stays real.
#pragma once

#include "planner/planfacts.h"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <QHash>

#include <mutex>
#include <optional>

// The Planner's facts from an engine plan (floor, default, cliff, …).
PlanFacts planFactsOf(const waste::MemoryPlan &plan);
// What a compute calibration says, in words.
CalibrationReport calibrationReportOf(const waste::ComputeCalibration &calibration);

struct MachineOverride {
    qint64 physical = 0;
    qint64 usable = 0;  // 0: same as physical
    qint64 other = 0;   // RAM other programs hold
    double diskGBps = 0; // > 0: use instead of measuring
};

class EnginePlanSource : public PlanSource {
public:
    explicit EnginePlanSource(std::optional<MachineOverride> machine = std::nullopt);

    PlanFacts plan(const QString &container, int ctxTokens) override;
    QList<ForecastPoint> forecast(const QString &container, const PlanFacts &facts, const QList<qint64> &budgets,
                                  const DiskMeasurement &disk) override;
    DiskMeasurement measureDisk(const QString &container) override;
    CalibrationReport calibrate(bool rerun) override;

    // The calibration file the app shares with `waste plan` (the user's cache folder).
    static QString calibrationFile();

private:
    waste::ComputeCalibration calibration(bool rerun);

    std::optional<MachineOverride> m_machine;
    std::mutex m_mutex; // the forecast and a re-calibration may run on two pool threads
    std::optional<waste::ComputeCalibration> m_calibration;
    QHash<QString, DiskMeasurement> m_disks; // by absolute container path
};
