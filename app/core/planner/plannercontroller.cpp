#include "planner/plannercontroller.h"

#include "settings/appsettings.h"
#include "units/units.h"

#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace {

constexpr int kChartPoints = 64;

// The chart's right end: past the full working sets, and past the machine's RAM (so the
// cliff shows) unless the model is so small that RAM would squash its curve into a line.
qint64 axisMaxFor(const PlanFacts &f)
{
    const qint64 model = std::max(f.recommended + f.recommended / 4, f.floor * 2);
    const qint64 machine = std::max(f.physical, f.cliff + f.cliff / 10);
    return machine <= model * 3 ? std::max(model, machine) : model;
}

} // namespace

PlannerController::PlannerController(std::shared_ptr<PlanSource> source, QObject *parent)
    : QObject(parent), m_source(std::move(source))
{
    if (AppSettings *s = AppSettings::instance()) {
        m_ctx = s->contextTokens();
        m_budget = s->budgetBytes();
    }
    connect(&m_planWatcher, &QFutureWatcher<Result>::finished, this, &PlannerController::onPlanned);
    connect(&m_diskWatcher, &QFutureWatcher<DiskMeasurement>::finished, this, [this] {
        m_disk = m_diskWatcher.result();
        m_measuring = false;
        Q_EMIT diskChanged();
        refresh(); // the prediction follows the measured speed
    });
}

PlannerController::~PlannerController()
{
    m_planWatcher.waitForFinished();
    m_diskWatcher.waitForFinished();
}

void PlannerController::setContainer(const QString &path)
{
    if (path == m_container)
        return;
    m_container = path;
    m_disk = {};
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
        [source = m_source, container = m_container, ctx = m_ctx, disk = m_disk.gbPerSecond]() -> Result {
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
    m_facts = r.error.isEmpty() ? r.facts : PlanFacts{};
    m_points = r.error.isEmpty() ? r.points : QList<ForecastPoint>{};
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
    return {{QStringLiteral("tokensPerSecond"), tps},
            {QStringLiteral("hitRate"), hit},
            {QStringLiteral("pastCliff"), m_facts.cliff > 0 && budget > m_facts.cliff}};
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
    const QString speed = tps >= 10 ? QString::number(tps, 'f', 0) : QString::number(tps, 'f', tps >= 1 ? 1 : 2);
    const qint64 cache = budget - f.floor + f.minExpertCache;
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
    if (std::llabs(budget - f.defaultBudget) <= std::max<qint64>(f.floor / 200, 1 << 20))
        return tr("The engine's default. %1").arg(what);
    return what;
}

bool PlannerController::budgetApplied() const
{
    AppSettings *s = AppSettings::instance();
    if (!s)
        return false;
    const qint64 saved = s->budgetBytes();
    return saved == m_budget || (saved == 0 && m_budget == m_facts.defaultBudget);
}

void PlannerController::applyBudget()
{
    if (AppSettings *s = AppSettings::instance()) {
        // The default is stored as 0 so the engine keeps choosing it for other models.
        s->setBudgetBytes(m_budget == m_facts.defaultBudget ? 0 : m_budget);
        s->setContextTokens(m_ctx);
    }
    Q_EMIT budgetChanged();
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
        return m_disk.warning.isEmpty() ? tr("Disk speed not measured yet: the prediction uses the engine's first "
                                             "reading of the model's expert file.")
                                        : tr("The disk could not be measured: %1").arg(m_disk.warning);
    return tr("%1 reads %2 GB/s with the engine's own expert reads (direct I/O); the prediction uses it.")
        .arg(m_disk.disk.isEmpty() ? tr("The model's disk") : m_disk.disk)
        .arg(m_disk.gbPerSecond, 0, 'f', 2);
}
