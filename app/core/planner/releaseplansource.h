// ReleasePlanSource: the Planner's numbers for a release before it is downloaded, from its
// config.json (waste::planRelease: the container `waste convert` makes by default) instead of
// a container on disk, so the release plan draws the same chart as an open model: floor,
// default, paging cliff and the predicted speed along the budget. The disk is the models
// folder's (planner/folderdisk); compute is this machine's calibration.
#pragma once

#include "planner/folderdisk.h"
#include "planner/planfacts.h"

#include <waste/release_plan.hpp>
#include <waste/waste.hpp>

#include <QByteArray>
#include <QString>

#include <mutex>

// What a forecast of a release's layout reads from this machine: its compute per token, the
// disk's speed (alone and beside a decode) and the compute time a read costs (0: not
// measured, not charged).
waste::ForecastInputs forecastInputsOf(const waste::ReleaseLayout &layout, const FolderDisk &disk);

class ReleasePlanSource : public PlanSource {
public:
    // The release to plan, the machine's RAM (0: this machine) and the folders whose disk
    // reads it (the models folder, else the data folder's demo). Thread-safe.
    void setRelease(const QByteArray &configJson, qint64 machineRam, const QString &modelsFolder,
                    const QString &dataFolder);

    PlanFacts plan(const QString &container, int ctxTokens) override;
    QList<ForecastPoint> forecast(const QString &container, const PlanFacts &facts, const QList<qint64> &budgets,
                                  const DiskMeasurement &disk) override;
    DiskMeasurement measureDisk(const QString &container) override;
    CalibrationReport calibrate(bool rerun) override;

private:
    std::mutex m_mutex;
    QString m_models, m_data;
    std::string m_config;
    qint64 m_ram = 0;
};
