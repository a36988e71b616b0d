#include "planner/plannercontroller.h"

#include "engine/enginecontroller.h"
#include "engine/engineworker.h"
#include "settings/appsettings.h"
#include "units/units.h"

#include <waste/batch.hpp>
#include <waste/waste.hpp>

#include <QFileInfo>
#include <QLocale>
#include <QtConcurrent/QtConcurrentRun>

#include <iterator>

#include <algorithm>
#include <cmath>

namespace {

constexpr int kChartPoints = 64;

// The fields of the engine's plan the budget rules below read.
waste::MemoryPlan budgetPlan(const PlanFacts &f)
{
    waste::MemoryPlan p;
    p.floor_bytes = f.floor;
    p.min_expert_cache = f.minExpertCache;
    p.state_bytes = f.state;
    p.checkpoint_bytes = f.checkpoint;
    p.expert_bytes_total = f.expertBytes;
    p.max_record_bytes = f.maxRecord;
    p.pass_floor_bytes = f.passFloor;
    p.pass_fixed_bytes = f.passFixed;
    p.pass_piece_token_bytes = f.passPieceToken;
    p.pass_token_bytes = f.passToken;
    return p;
}

// The largest budget this model can use: every expert cached (the engine's rule, which
// counts the checkpoint and a slot's rounding), or floor + 3 working sets when the expert
// total is not known.
qint64 usefulMax(const PlanFacts &f)
{
    const qint64 all = f.expertBytes > 0 ? waste::everyExpertBudget(budgetPlan(f)) : f.recommended;
    return std::min(f.recommended, all);
}

// The expert cache the engine opens with at `budget` (waste::expertCacheAt's rule: the
// checkpoint comes out of it where it has room), less the states of the answers the app
// decodes at once (waste::batchShareAt; the status bar shows the same figure).
qint64 expertCacheAt(const PlanFacts &f, qint64 budget)
{
    const waste::MemoryPlan p = budgetPlan(f);
    return waste::batchShareAt(p, waste::expertCacheAt(p, budget).cache_bytes, EngineWorker::kSequencesWanted).cache_bytes;
}

// Whether the model could use more RAM than is safe here: past 7/8 of RAM or the cliff.
bool nearsCliff(const PlanFacts &f)
{
    return f.cliff > 0 && (usefulMax(f) > f.cap || usefulMax(f) > f.cliff);
}

// The chart's right end: past the full working sets; for a model that could use more than
// 7/8 of RAM, past the cliff by enough to show the collapse beyond it. A model that never
// nears the cliff keeps its own range (RAM would squash its curve into a line) and the page
// says so in words.
qint64 axisMaxFor(const PlanFacts &f)
{
    const qint64 model = std::max(f.recommended + f.recommended / 4, f.floor * 2);
    if (!nearsCliff(f))
        return model;
    return std::max(model, f.cliff + std::max(f.cliff / 6, f.workingSet));
}

} // namespace

PlannerController::PlannerController(std::shared_ptr<PlanSource> source, QObject *parent)
    : QObject(parent), m_source(std::move(source))
{
    if (AppSettings *s = AppSettings::instance()) {
        m_ctx = s->contextTokens();
        connect(s, &AppSettings::changed, this, &PlannerController::budgetChanged);
    }
    connect(&m_planWatcher, &QFutureWatcher<Result>::finished, this, &PlannerController::onPlanned);
    connect(&m_diskWatcher, &QFutureWatcher<DiskMeasurement>::finished, this, [this] {
        m_disk = m_diskWatcher.result();
        m_measuring = false;
        Q_EMIT diskChanged();
        refresh(); // the prediction follows the measured speed
    });
    connect(&m_calibrationWatcher, &QFutureWatcher<CalibrationReport>::finished, this, [this] {
        const CalibrationReport r = m_calibrationWatcher.result();
        m_calibrationText = r.text;
        m_calibrationWarning = r.warning;
        m_calibrating = false;
        Q_EMIT calibrationChanged();
        refresh(); // the prediction follows the new compute figures
    });
    if (EngineController *e = EngineController::instance())
        connect(e, &EngineController::stateChanged, this, [this, e] {
            if (m_reopening && e->state() != EngineController::Loading) {
                m_reopening = false;
                Q_EMIT reopeningChanged();
                Q_EMIT budgetChanged();
            }
        });
}

PlannerController::~PlannerController()
{
    m_planWatcher.waitForFinished();
    m_diskWatcher.waitForFinished();
    m_calibrationWatcher.waitForFinished();
}

void PlannerController::setContainer(const QString &path)
{
    if (path == m_container)
        return;
    m_container = path;
    m_disk = {};
    // Each container has its own budget: the one kept for it, or (0) its default once planned.
    m_budget = AppSettings::instance() ? AppSettings::instance()->budgetFor(path) : 0;
    m_facts = {};
    m_points.clear();
    Q_EMIT containerChanged();
    Q_EMIT diskChanged();
    refresh();
}

void PlannerController::setContextTokens(int tokens)
{
    tokens = qBound(256, tokens, 1 << 20);
    if (tokens == m_ctx)
        return;
    m_ctx = tokens;
    Q_EMIT containerChanged();
    refresh();
}

namespace {
struct ContextChoice {
    int tokens;
    const char *name;
};
constexpr ContextChoice kContexts[] = {{4096, "4K"},     {8192, "8K"},     {32768, "32K"},
                                       {131072, "128K"}, {262144, "256K"}, {1048576, "1M"}};
} // namespace

QStringList PlannerController::contextNames()
{
    QStringList names;
    for (const ContextChoice &c : kContexts)
        names << QString::fromLatin1(c.name);
    return names;
}

int PlannerController::contextIndex() const
{
    for (int i = 0; i < int(std::size(kContexts)); ++i)
        if (kContexts[i].tokens == m_ctx)
            return i;
    return 0;
}

void PlannerController::setContextIndex(int index)
{
    if (index >= 0 && index < int(std::size(kContexts)))
        setContextTokens(kContexts[index].tokens);
}

void PlannerController::setBusy(bool busy)
{
    if (busy != m_busy) {
        m_busy = busy;
        Q_EMIT busyChanged();
    }
}

void PlannerController::refresh()
{
    if (m_container.isEmpty() || !m_source) {
        m_facts = {};
        m_points.clear();
        m_error.clear();
        Q_EMIT planChanged();
        Q_EMIT budgetChanged();
        return;
    }
    if (m_planWatcher.isRunning()) {
        m_again = true; // one more pass with the newest inputs when this one ends
        return;
    }
    setBusy(true);
    m_planWatcher.setFuture(QtConcurrent::run(
        [source = m_source, container = m_container, ctx = m_ctx, disk = m_disk]() -> Result {
            Result r;
            try {
                r.facts = source->plan(container, ctx);
                const PlanFacts &f = r.facts;
                // The chart spans from under the floor (refused) to past the machine's RAM.
                const qint64 lo = f.floor - f.floor / 5;
                const qint64 hi = axisMaxFor(f);
                QList<qint64> budgets;
                for (int i = 0; i < kChartPoints; ++i) {
                    const qint64 b = lo + (hi - lo) * i / (kChartPoints - 1);
                    if (b >= f.floor)
                        budgets << b;
                }
                // Exact points at the floor, the default and the cliff so markers sit on the curve.
                for (qint64 b : {f.floor, f.defaultBudget, f.cliff, f.cliff + 1})
                    if (b >= f.floor && b <= hi)
                        budgets << b;
                std::sort(budgets.begin(), budgets.end());
                budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
                r.calibration = source->calibrate(false);
                r.points = source->forecast(container, f, budgets, disk);
            } catch (const std::exception &e) {
                r.error = QString::fromStdString(e.what());
            }
            return r;
        }));
}

void PlannerController::onPlanned()
{
    setBusy(false);
    const Result r = m_planWatcher.result();
    m_error = r.error;
    if (!r.calibration.text.isEmpty()) {
        m_calibrationText = r.calibration.text;
        if (m_calibrationWarning != r.calibration.warning) {
            m_calibrationWarning = r.calibration.warning;
            Q_EMIT calibrationChanged();
        }
    }
    m_facts = r.error.isEmpty() ? r.facts : PlanFacts{};
    m_points = r.error.isEmpty() ? r.points : QList<ForecastPoint>{};
    applyObserved();
    if (m_facts.floor > 0) {
        m_axisMin = m_facts.floor - m_facts.floor / 5;
        m_axisMax = axisMaxFor(m_facts);
        if (m_budget <= 0)
            m_budget = m_facts.defaultBudget;
    }
    Q_EMIT planChanged();
    Q_EMIT budgetChanged();
    if (m_again) {
        m_again = false;
        refresh();
    }
}

QVariantList PlannerController::points() const
{
    QVariantList out;
    for (const ForecastPoint &p : m_points)
        out << QVariantMap{{QStringLiteral("budget"), p.budget},
                           {QStringLiteral("tokensPerSecond"), p.tokensPerSecond},
                           {QStringLiteral("hitRate"), p.hitRate},
                           {QStringLiteral("pastCliff"), p.pastCliff}};
    return out;
}

double PlannerController::floorPartWidth(qint64 partBytes, double barWidth) const
{
    if (m_facts.floor <= 0)
        return 0;
    return std::max(2.0, barWidth * double(partBytes) / double(m_facts.floor));
}

double PlannerController::maxTokensPerSecond() const
{
    double m = 0;
    for (const ForecastPoint &p : m_points)
        m = std::max(m, p.tokensPerSecond);
    return m;
}

void PlannerController::setBudget(qint64 bytes)
{
    bytes = std::max<qint64>(0, bytes);
    if (bytes == m_budget)
        return;
    m_budget = bytes;
    Q_EMIT budgetChanged();
}

QVariantMap PlannerController::predictionAt(qint64 budget) const
{
    if (m_points.isEmpty() || budget < m_facts.floor)
        return {};
    const ForecastPoint *lo = &m_points.front();
    const ForecastPoint *hi = &m_points.back();
    for (const ForecastPoint &p : m_points) {
        if (p.budget <= budget)
            lo = &p;
        if (p.budget >= budget) {
            hi = &p;
            break;
        }
    }
    // Never interpolate across the cliff: the side the budget is on decides.
    const double t = hi->budget > lo->budget ? double(budget - lo->budget) / double(hi->budget - lo->budget) : 0;
    const ForecastPoint &side = (m_facts.cliff > 0 && budget > m_facts.cliff) ? *hi : *lo;
    const bool sameSide = lo->pastCliff == hi->pastCliff;
    const double tps = sameSide ? lo->tokensPerSecond + t * (hi->tokensPerSecond - lo->tokensPerSecond)
                                : side.tokensPerSecond;
    const double hit = lo->hitRate + t * (hi->hitRate - lo->hitRate);
    const double prefill = lo->prefillSeconds > 0 && hi->prefillSeconds > 0
                               ? lo->prefillSeconds + t * (hi->prefillSeconds - lo->prefillSeconds)
                               : side.prefillSeconds;
    return {{QStringLiteral("tokensPerSecond"), tps},
            {QStringLiteral("prefillSeconds"), prefill},
            {QStringLiteral("hitRate"), hit},
            {QStringLiteral("pastCliff"), m_facts.cliff > 0 && budget > m_facts.cliff}};
}

double PlannerController::prefillTokensPerSecond() const
{
    if (!ready())
        return 0;
    const double s = predictionAt(m_budget).value(QStringLiteral("prefillSeconds")).toDouble();
    return s > 0 ? kPlannerPromptTokens / s : 0;
}

int PlannerController::budgetLevel() const
{
    if (!ready())
        return 0;
    if (m_budget < m_facts.floor || (m_facts.cliff > 0 && m_budget > m_facts.cliff))
        return 2;
    if (m_facts.cap > 0 && m_budget > m_facts.cap)
        return 1;
    return 0;
}

QString PlannerController::describe(qint64 budget) const
{
    if (!ready())
        return {};
    const PlanFacts &f = m_facts;
    const QString ctx = f.ctx >= 1024 ? QStringLiteral("%1K").arg(f.ctx / 1024) : QString::number(f.ctx);
    if (budget < f.floor)
        return tr("Below the floor of %1 the engine refuses to open this model with a %2 context: choose at least %1, "
                  "or a shorter context.")
            .arg(Units::bytes(f.floor), ctx);
    const QVariantMap p = predictionAt(budget);
    const double tps = p.value(QStringLiteral("tokensPerSecond")).toDouble();
    const int hit = int(std::lround(p.value(QStringLiteral("hitRate")).toDouble() * 100));
    const QString speed = Units::tokensPerSecond(tps);
    const qint64 cache = expertCacheAt(f, budget);
    // No disk time left to predict (every expert fits): the processor sets the pace.
    const bool computeBound = tps <= 0;
    if (f.cliff > 0 && budget > f.cliff)
        return tr("Past %1 on this %2 machine the OS will page the expert cache: expect about 8× slower "
                  "(about %3 tok/s). Other programs hold %4 now; stay at or below %1.")
            .arg(Units::bytes(f.cliff), Units::bytes(f.physical), speed, Units::bytes(f.other));
    if (f.cap > 0 && budget > f.cap)
        return tr("Above 7/8 of the RAM this process may use (%1): the engine will warn, and other programs have "
                  "little room left. Expect about %2 tok/s.")
            .arg(Units::bytes(f.cap), speed);
    const QString what = computeBound
                             ? tr("%1 of expert cache holds every expert: no disk reads while decoding, so the "
                                  "processor sets the speed.").arg(Units::bytes(cache))
                             : tr("%1 of expert cache: about %2 tok/s with %3% of expert reads served from RAM.")
                                   .arg(Units::bytes(cache), speed)
                                   .arg(hit);
    // The wait before a first answer: reading a prompt of a system prompt, tools and a question.
    const double prefill = p.value(QStringLiteral("prefillSeconds")).toDouble();
    const QString first = prefill > 0 ? QStringLiteral(" ") + tr("A %1-token prompt reads in about %2 (%3 tok/s).")
                                                                  .arg(QLocale().toString(kPlannerPromptTokens))
                                                                  .arg(prefill < 1 ? tr("a second") : Units::duration(qint64(std::lround(prefill))))
                                                                  .arg(Units::tokensPerSecond(kPlannerPromptTokens / prefill))
                                      : QString();
    // Every expert in the cache: the open reads them all first (waste::OpenOptions::loadEveryExpert).
    const double gbps = diskGBps();
    const double load = f.expertBytes > 0 && f.maxRecord > 0 && cache / f.maxRecord >= f.expertBytes / f.maxRecord && gbps > 0
                            ? double(f.expertBytes) / 1e9 / gbps
                            : 0;
    const QString opening = load > 0 ? QStringLiteral(" ") + tr("Opening the model reads every expert first: about %1.")
                                                             .arg(load < 1 ? tr("a second") : Units::duration(qint64(std::lround(load))))
                                     : QString();
    if (std::llabs(budget - f.defaultBudget) <= std::max<qint64>(f.floor / 200, 1 << 20))
        return tr("The engine's default. %1").arg(what) + first + opening;
    return what + first + opening;
}

qint64 PlannerController::savedBudgetBytes() const
{
    AppSettings *s = AppSettings::instance();
    return s ? s->budgetFor(m_container) : 0;
}

bool PlannerController::budgetApplied() const
{
    // Never "applied" below the floor at the chosen context, whatever was kept.
    if (!ready() || !AppSettings::instance() || m_budget < m_facts.floor)
        return false;
    const qint64 saved = savedBudgetBytes();
    return saved == m_budget || (saved == 0 && m_budget == m_facts.defaultBudget);
}

QString PlannerController::savedBudgetText() const
{
    if (!ready())
        return {};
    const qint64 saved = savedBudgetBytes();
    const QString ctx = m_facts.ctx >= 1024 ? QStringLiteral("%1K").arg(m_facts.ctx / 1024) : QString::number(m_facts.ctx);
    if (saved <= 0)
        return tr("No budget kept for this model: it opens at the engine's default (%1 at a %2 context).")
            .arg(Units::bytes(m_facts.defaultBudget), ctx);
    if (saved < m_facts.floor)
        return tr("The budget kept for this model, %1, is below its floor of %2 at a %3 context: the model will not "
                  "open with it. Choose at least %2, or a shorter context.")
            .arg(Units::bytes(saved), Units::bytes(m_facts.floor), ctx);
    return tr("Kept for this model: %1.").arg(Units::bytes(saved));
}

void PlannerController::applyBudget()
{
    AppSettings *s = AppSettings::instance();
    if (!s || !ready() || m_budget < m_facts.floor)
        return; // refused below the floor, as the engine would refuse it
    // The default is kept as 0, so the engine goes on choosing it if the machine changes.
    const qint64 kept = m_budget == m_facts.defaultBudget ? 0 : m_budget;
    s->setBudgetFor(m_container, kept);
    s->setContextTokens(m_ctx);
    // The open model takes it now: re-opened at that budget, with the engine's progress.
    EngineController *e = EngineController::instance();
    if (e && !e->modelPath().isEmpty() &&
        QFileInfo(e->modelPath()).absoluteFilePath() == QFileInfo(m_container).absoluteFilePath() &&
        (e->budgetBytes() != m_budget || e->contextTokens() != m_ctx)) {
        m_reopening = true;
        Q_EMIT reopeningChanged();
        e->openModel(m_container, kept, m_ctx);
    }
    Q_EMIT budgetChanged();
}

void PlannerController::recalibrate()
{
    if (m_calibrating || !m_source)
        return;
    m_calibrating = true;
    Q_EMIT calibrationChanged();
    m_calibrationWatcher.setFuture(QtConcurrent::run([source = m_source]() -> CalibrationReport {
        try {
            return source->calibrate(true);
        } catch (const std::exception &e) {
            return {tr("The compute calibration failed: %1").arg(QString::fromStdString(e.what())), {}};
        }
    }));
}

bool PlannerController::cliffInRange() const
{
    return ready() && m_facts.cliff > 0 && m_facts.cliff <= m_axisMax;
}

QString PlannerController::cliffText() const
{
    if (!ready() || m_facts.cliff <= 0)
        return {};
    const PlanFacts &f = m_facts;
    if (nearsCliff(f))
        return tr("This model could use more RAM than is safe here: past %1 on this %2 machine the OS pages the "
                  "expert cache out, and tokens/s fall about 8× (shaded). Keep the budget left of it.")
            .arg(Units::bytes(f.cliff), Units::bytes(f.physical));
    return tr("This model never comes near the paging cliff on this machine: even the most it can use (%1) stays "
              "well under %2, where paging would begin.")
        .arg(Units::bytes(usefulMax(f)), Units::bytes(f.cliff));
}

void PlannerController::setObservedSpeeds(std::shared_ptr<ObservedSpeeds> observed)
{
    m_observed = std::move(observed);
}

void PlannerController::applyObserved()
{
    m_correction = {};
    if (!m_observed || m_points.isEmpty() || m_facts.floor <= 0)
        return;
    // The forecast as calibrated, at each run's budget, against what the run measured.
    m_correction = ObservedSpeeds::correction(
        m_observed->runs(m_container),
        [this](qint64 b) { return predictionAt(b).value(QStringLiteral("tokensPerSecond")).toDouble(); },
        [this](qint64 b) {
            const double s = predictionAt(b).value(QStringLiteral("prefillSeconds")).toDouble();
            return s > 0 ? kPlannerPromptTokens / s : 0.0;
        });
    for (ForecastPoint &p : m_points) {
        if (m_correction.decodeRuns > 0)
            p.tokensPerSecond *= m_correction.decode;
        if (m_correction.prefillRuns > 0 && p.prefillSeconds > 0)
            p.prefillSeconds /= m_correction.prefill;
    }
}

QString PlannerController::observedText() const
{
    const ObservedSpeeds::Correction &c = m_correction;
    if (c.decodeRuns == 0 && c.prefillRuns == 0)
        return {};
    QStringList parts;
    if (c.decodeRuns > 0)
        parts << tr("answers measured %1× the calibration's speed (%2)")
                     .arg(c.decode, 0, 'f', 2)
                     .arg(Units::count(c.decodeRuns, tr("run"), tr("runs")));
    if (c.prefillRuns > 0)
        parts << tr("prompts read at %1× its prediction (%2)")
                     .arg(c.prefill, 0, 'f', 2)
                     .arg(Units::count(c.prefillRuns, tr("run"), tr("runs")));
    return tr("Corrected by this model's real runs on this machine: %1.").arg(parts.join(tr("; ")));
}

QString PlannerController::computeText() const
{
    const QString observed = observedText();
    const QString tail = observed.isEmpty() ? QString() : QStringLiteral(" ") + observed;
    if (!ready() || m_points.isEmpty())
        return m_calibrationText + tail;
    double compute = 0;
    for (const ForecastPoint &pt : m_points)
        if (pt.budget <= m_facts.defaultBudget)
            compute = pt.computeSeconds;
    if (compute <= 0)
        return m_calibrationText + tail;
    const QString time = compute >= 1 ? tr("%1 s").arg(compute, 0, 'f', 1)
                                      : tr("%1 ms").arg(compute * 1000, 0, 'f', compute < 0.01 ? 2 : 1);
    return tr("Compute takes about %1 a token here; the rest is the reads the disk cannot hide. %2")
               .arg(time, m_calibrationText)
           + tail;
}

void PlannerController::useDefaultBudget()
{
    setBudget(m_facts.defaultBudget);
}

void PlannerController::measureDisk()
{
    if (m_measuring || m_container.isEmpty() || !m_source)
        return;
    m_measuring = true;
    Q_EMIT diskChanged();
    m_diskWatcher.setFuture(QtConcurrent::run([source = m_source, container = m_container]() -> DiskMeasurement {
        try {
            return source->measureDisk(container);
        } catch (const std::exception &e) {
            DiskMeasurement d;
            d.warning = QString::fromStdString(e.what());
            return d;
        }
    }));
}

QString PlannerController::diskText() const
{
    if (m_measuring)
        return tr("Measuring the disk with the engine's direct reads…");
    if (m_disk.gbPerSecond <= 0)
        return m_disk.warning.isEmpty() ? tr("The prediction measured the model's expert file once with the engine's "
                                             "direct reads; Measure disk reads it again.")
                                        : tr("The disk could not be measured: %1").arg(m_disk.warning);
    const QString disk = m_disk.disk.isEmpty() ? tr("The model's disk") : m_disk.disk;
    // A token's reads share the cores with its compute, and on a small machine get less.
    if (m_disk.decodeGbPerSecond > 0 && m_disk.decodeGbPerSecond < m_disk.gbPerSecond)
        return tr("%1 reads %2 GB/s with the engine's own expert reads (direct I/O), %3 GB/s while a token "
                  "computes beside them; the prediction uses both.")
            .arg(disk)
            .arg(m_disk.gbPerSecond, 0, 'f', 2)
            .arg(m_disk.decodeGbPerSecond, 0, 'f', 2);
    return tr("%1 reads %2 GB/s with the engine's own expert reads (direct I/O); the prediction uses it.")
        .arg(disk)
        .arg(m_disk.gbPerSecond, 0, 'f', 2);
}
