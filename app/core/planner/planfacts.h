// What the planner page shows, as plain numbers: the model's fixed costs for one context
// length, what the machine offers, and the predicted speed for a row of budgets. Filled
// from the engine's planner (waste::planMemory / forecastBudgets) or, in tests, from a
// fake machine.
#pragma once

#include <QList>
#include <QString>

struct PlanFacts {
    qint64 ctx = 0;
    qint64 trunk = 0;
    qint64 state = 0;         // attention state (KDA + MLA latent cache) for ctx
    qint64 scratch = 0;
    qint64 minExpertCache = 0;
    qint64 vision = 0;
    qint64 floor = 0;         // below: the engine refuses to open
    qint64 recommended = 0;   // floor + 3 working sets
    qint64 workingSet = 0;
    qint64 defaultBudget = 0; // what the engine picks with no budget given
    qint64 physical = 0;
    qint64 usable = 0;
    qint64 cap = 0;           // 7/8 of usable: the engine warns above it
    qint64 other = 0;         // RAM other programs hold now
    qint64 cliff = 0;         // budgets above this are likely to be paged
    qint64 maxRecord = 0;     // one expert cache slot
    qint64 checkpoint = 0;    // the state checkpoint the expert cache holds where it has room
    qint64 expertBytes = 0;   // every expert record of the model (0: not known)
    // A prompt's pass (waste::MemoryPlan's pass_*): the batch's states borrow the floor's
    // prompt room before the cache (waste::batchShareAt).
    qint64 passFloor = 0;
    qint64 passFixed = 0;
    qint64 passToken = 0;
    qint64 passPieceToken = 0;
};

struct ForecastPoint {
    qint64 budget = 0;
    double tokensPerSecond = 0;
    double hitRate = 0;
    bool pastCliff = false;
    double computeSeconds = 0; // per token, from the machine's calibration
    double ioSeconds = 0;      // per token, reading the misses
    // Reading a prompt of kPlannerPromptTokens at this budget (waste::estimatePrefill); 0: not known.
    double prefillSeconds = 0;
};

// The prompt the Planner prices a first answer with: a system prompt, a tool list and a question.
inline constexpr int kPlannerPromptTokens = 4096;

struct DiskMeasurement {
    double gbPerSecond = 0;    // records read with the engine's queue depth
    double decodeGbPerSecond = 0; // the same beside a decode (0: not measured: gbPerSecond)
    double latencySeconds = 0; // one record read alone
    double cpuSecondsPerRead = 0; // the compute time a record read costs (0: not measured)
    QString disk;    // the device the model lives on
    QString warning; // why there is no figure
};

// What a compute calibration says: what was measured, in words, and (when part of it could
// not be measured) what that means for the figures; empty when all of it was.
struct CalibrationReport {
    QString text;
    QString warning;
};

// Where the numbers come from. The engine's planner in the app; a fake machine in tests.
// Called off the GUI thread: implementations must not touch QObjects.
class PlanSource {
public:
    virtual ~PlanSource() = default;
    virtual PlanFacts plan(const QString &container, int ctxTokens) = 0;
    // disk.gbPerSecond <= 0: the source measures or assumes a speed itself.
    virtual QList<ForecastPoint> forecast(const QString &container, const PlanFacts &facts,
                                          const QList<qint64> &budgets, const DiskMeasurement &disk) = 0;
    virtual DiskMeasurement measureDisk(const QString &container) = 0;
    // Measures the machine's compute speed (again, with rerun) for the forecast; says what
    // was measured, in words.
    virtual CalibrationReport calibrate(bool rerun) = 0;
};
