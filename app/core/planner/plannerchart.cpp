#include "planner/plannerchart.h"

#include "planner/niceaxis.h"

#include <QColor>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QPointF>

#include <algorithm>
#include <cmath>

namespace {

constexpr double MiB = 1024.0 * 1024.0;
constexpr double GiB = 1024.0 * MiB;
// At most this many intervals on the budget axis, fewer when their labels would not fit.
constexpr int BudgetIntervals = 8;
constexpr int SpeedIntervals = 4;

// Assigns an input and recomputes when it changed.
template <typename T>
bool assign(T &field, const T &value)
{
    if (field == value)
        return false;
    field = value;
    return true;
}

} // namespace

PlannerChart::PlannerChart(QObject *parent)
    : QObject(parent)
{
    update();
}

void PlannerChart::setAxisMinBytes(qint64 bytes)
{
    if (assign(m_axisMin, bytes))
        update();
}

void PlannerChart::setAxisMaxBytes(qint64 bytes)
{
    if (assign(m_axisMax, bytes))
        update();
}

void PlannerChart::setMaxTokensPerSecond(double tokensPerSecond)
{
    if (assign(m_maxTokensPerSecond, tokensPerSecond))
        update();
}

void PlannerChart::setPoints(const QVariantList &points)
{
    if (assign(m_points, points))
        update();
}

void PlannerChart::setPlotWidth(double px)
{
    if (assign(m_plotWidth, px))
        update();
}

void PlannerChart::setLabelPixelSize(int px)
{
    if (px <= 0 || px == m_font.pixelSize())
        return;
    m_font.setPixelSize(px);
    update();
}

void PlannerChart::setLabelGap(double px)
{
    if (assign(m_labelGap, px))
        update();
}

void PlannerChart::setFloorBytes(qint64 bytes)
{
    if (assign(m_floor, bytes))
        update();
}

void PlannerChart::setCliffBytes(qint64 bytes)
{
    if (assign(m_cliff, bytes))
        update();
}

void PlannerChart::setBudgetBytes(qint64 bytes)
{
    if (assign(m_budget, bytes))
        update();
}

void PlannerChart::setMarks(const QVariantList &marks)
{
    if (assign(m_marks, marks))
        update();
}

double PlannerChart::unitBytes() const
{
    // Tiny models (the demo, test containers) would read 0.01 GiB: MiB below 4 GiB.
    return m_axisMax < 4 * GiB ? MiB : GiB;
}

qint64 PlannerChart::bytesAt(double value) const
{
    return static_cast<qint64>(std::floor(value * unitBytes() + 0.5));
}

double PlannerChart::xOf(qint64 bytes) const
{
    const double lo = m_axes.budgetMin * unitBytes();
    const double hi = m_axes.budgetMax * unitBytes();
    return hi > lo ? (double(bytes) - lo) / (hi - lo) * m_plotWidth : 0;
}

QString PlannerChart::budgetLabel(double value, double step) const
{
    return QString::number(value, 'f', niceTickDecimals(step))
           + (unitBytes() == MiB ? QStringLiteral(" MiB") : QStringLiteral(" GiB"));
}

void PlannerChart::update()
{
    const Axes axes = axesFor();
    const bool axesMoved = !(axes == m_axes);
    m_axes = axes;
    const Positions positions = positionsFor();
    const bool positionsMoved = !(positions == m_positions);
    m_positions = positions;
    Series series = seriesFor();
    const bool seriesMoved = !(series == m_series);
    m_series = std::move(series);
    Q_EMIT inputsChanged();
    if (axesMoved)
        Q_EMIT axesChanged();
    if (positionsMoved)
        Q_EMIT positionsChanged();
    if (seriesMoved)
        Q_EMIT seriesChanged();
}

PlannerChart::Axes PlannerChart::axesFor() const
{
    Axes a;
    const double unit = unitBytes();
    a.inMiB = unit == MiB;
    const double min = double(m_axisMin) / unit, max = double(m_axisMax) / unit;
    // Fixed tick counts, never a tick interval: while a new plan arrives the range and the
    // step change one after the other, and an interval from the old range over the new one
    // would ask the chart for millions of ticks. The chart elides a label wider than its
    // interval to "…", so the step is the finest whose labels fit side by side.
    const QFontMetricsF metrics(m_font);
    a.budgetStep = fittingTickStep(min, max, BudgetIntervals, m_plotWidth, m_labelGap,
                                   [&](double value, double step) {
                                       return metrics.horizontalAdvance(budgetLabel(value, step));
                                   });
    const NiceRange budget = niceTickRange(min, max, a.budgetStep);
    a.budgetMin = budget.lo;
    a.budgetMax = budget.hi;
    a.budgetTicks = niceTickCount(budget.lo, budget.hi, a.budgetStep);
    a.budgetFormat = QStringLiteral("%.%1f %2").arg(niceTickDecimals(a.budgetStep))
                         .arg(a.inMiB ? QStringLiteral("MiB") : QStringLiteral("GiB"));

    // Tokens/s from 0 to a round top a little over the fastest prediction.
    const double top = m_maxTokensPerSecond > 0 ? m_maxTokensPerSecond * 1.05 : 0.1;
    a.speedStep = niceTickStep(top, SpeedIntervals);
    a.speedMax = a.speedStep > 0 ? std::ceil(top / a.speedStep - 1e-9) * a.speedStep : top;
    a.speedTicks = niceTickCount(0, a.speedMax, a.speedStep);
    a.speedFormat = QStringLiteral("%.%1f").arg(niceTickDecimals(a.speedStep));

    a.sliderMax = std::max(a.budgetMin + 0.1, a.budgetMax);
    a.sliderStep = a.inMiB ? 0.05 : 0.25;
    const int pixelSize = m_font.pixelSize() > 0 ? m_font.pixelSize() : QFontInfo(m_font).pixelSize();
    a.minimumHeight = 100 + 6 * pixelSize;
    return a;
}

PlannerChart::Positions PlannerChart::positionsFor() const
{
    Positions p;
    p.budgetValue = double(m_budget) / unitBytes();
    p.budgetX = xOf(m_budget);
    p.refusedWidth = std::max(0.0, xOf(m_floor));
    p.cliffX = std::max(0.0, xOf(m_cliff));
    p.cliffShown = m_cliff > 0 && p.cliffX < m_plotWidth;
    p.cliffWidth = std::max(0.0, m_plotWidth - p.cliffX);
    p.marks = placeMarks();
    return p;
}

QVariantList PlannerChart::placeMarks() const
{
    const double lo = m_axes.budgetMin * unitBytes();
    const double hi = m_axes.budgetMax * unitBytes();
    QList<QVariantMap> shown;
    for (const QVariant &v : m_marks) {
        const QVariantMap m = v.toMap();
        const double bytes = m.value(QStringLiteral("bytes")).toDouble();
        if (bytes >= lo && bytes <= hi)
            shown << m;
    }
    std::stable_sort(shown.begin(), shown.end(), [](const QVariantMap &a, const QVariantMap &b) {
        return a.value(QStringLiteral("bytes")).toDouble() < b.value(QStringLiteral("bytes")).toDouble();
    });

    if (shown.isEmpty())
        return {};
    const QFontMetricsF metrics(m_font);
    const double rowHeight = metrics.height() + 2 * MarkPad + 1;
    QList<QList<std::pair<double, double>>> rows; // per row, the [left, right] spans taken
    QVariantList out;
    for (QVariantMap m : shown) {
        const double lineX = xOf(m.value(QStringLiteral("bytes")).toLongLong());
        const double w = std::ceil(metrics.horizontalAdvance(m.value(QStringLiteral("name")).toString())) + 2 * MarkPad;
        double left = lineX + MarkGap;
        if (left + w > m_plotWidth)
            left = std::max(0.0, lineX - MarkGap - w);
        qsizetype row = 0;
        const auto meets = [&](const std::pair<double, double> &s) {
            return left < s.second + MarkGap && s.first < left + w + MarkGap;
        };
        while (row < rows.size() && std::any_of(rows[row].cbegin(), rows[row].cend(), meets))
            ++row;
        if (row == rows.size())
            rows.append(QList<std::pair<double, double>>{});
        rows[row].append({left, left + w});
        m.insert(QStringLiteral("lineX"), lineX);
        m.insert(QStringLiteral("labelX"), left + MarkPad);
        m.insert(QStringLiteral("labelY"), MarkPad + double(row) * rowHeight);
        out << m;
    }
    return out;
}

PlannerChart::Series PlannerChart::seriesFor() const
{
    Series s;
    const double unit = unitBytes();
    for (const QVariant &v : m_points) {
        const QVariantMap p = v.toMap();
        const double x = p.value(QStringLiteral("budget")).toDouble() / unit;
        const double tokensPerSecond = p.value(QStringLiteral("tokensPerSecond")).toDouble();
        // 0: no disk time to predict (compute-bound), so no point on the speed line.
        if (tokensPerSecond > 0)
            s.speed << QPointF(x, tokensPerSecond);
        s.hit << QPointF(x, p.value(QStringLiteral("hitRate")).toDouble() * 100);
    }
    return s;
}
