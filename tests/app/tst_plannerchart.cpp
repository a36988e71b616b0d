// The Planner chart's arithmetic (PlannerChart, niceaxis): round tick steps, the ranges and
// tick counts they give, the finest step whose labels fit the plot, GiB or MiB, where a
// budget lies on the plot and back, the marks' names kept apart, and the series' points.
#include "planner/niceaxis.h"
#include "planner/plannerchart.h"

#include <QColor>
#include <QPointF>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

namespace {

constexpr qint64 MiB = qint64(1) << 20;
constexpr qint64 GiB = qint64(1) << 30;

// A plot wide enough for any label: the finest step (8 intervals) always fits.
constexpr double WidePlot = 100000;

QVariantMap mark(const QString &name, qint64 bytes)
{
    return {{QStringLiteral("name"), name}, {QStringLiteral("bytes"), bytes}, {QStringLiteral("color"), QColor(Qt::red)}};
}

} // namespace

class TestPlannerChart : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Tick steps of 1, 2 or 5 times a power of ten, the smallest that keeps the count in
    // bounds: the K3 chart's 0 to 0.0536 tok/s in 4 steps of 0.02, the demo's 4205 tok/s in
    // 1000s (not 1051), 23 to 101 GiB in 10s; spans that are exact multiples stay exact.
    void ticksAreRound()
    {
        QCOMPARE(niceTickStep(0.0536, 4), 0.02);
        QCOMPARE(niceTickStep(4205, 5), 1000.0);
        QCOMPARE(niceTickStep(101 - 23, 8), 10.0);
        QCOMPARE(niceTickStep(0.3, 3), 0.1);
        QCOMPARE(niceTickStep(100, 5), 20.0);
        QCOMPARE(niceTickStep(1, 1), 1.0);
        QCOMPARE(niceTickStep(7, 1), 10.0);
        QCOMPARE(niceTickStep(12, 3), 5.0);
        // No step for an empty or broken span.
        QCOMPARE(niceTickStep(0, 4), 0.0);
        QCOMPARE(niceTickStep(-1, 4), 0.0);
        QCOMPARE(niceTickStep(std::nan(""), 4), 0.0);
        QCOMPARE(niceTickStep(10, 0), 0.0);
        QCOMPARE(niceTickDecimals(0.02), 2);
        QCOMPARE(niceTickDecimals(0.1), 1);
        QCOMPARE(niceTickDecimals(1), 0);
        QCOMPARE(niceTickDecimals(1000), 0);
        QCOMPARE(niceTickDecimals(0), 0);
    }

    void rangesEndOnMultiples_data()
    {
        QTest::addColumn<double>("min");
        QTest::addColumn<double>("max");
        QTest::addColumn<double>("step");
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<int>("ticks");
        QTest::newRow("widened both ways") << 23.4 << 101.2 << 10.0 << 20.0 << 110.0 << 10;
        QTest::newRow("ends already round") << 40.0 << 80.0 << 10.0 << 40.0 << 80.0 << 5;
        QTest::newRow("fractions") << 0.013 << 0.0536 << 0.02 << 0.0 << 0.06 << 4;
        QTest::newRow("never below zero") << -3.0 << 7.0 << 5.0 << 0.0 << 10.0 << 3;
        QTest::newRow("at least one step") << 30.0 << 30.0 << 10.0 << 30.0 << 40.0 << 2;
        QTest::newRow("at most 12 lines") << 0.0 << 100.0 << 1.0 << 0.0 << 100.0 << 12;
        QTest::newRow("no step") << 3.5 << 9.0 << 0.0 << 3.5 << 4.5 << 5;
    }
    void rangesEndOnMultiples()
    {
        QFETCH(double, min);
        QFETCH(double, max);
        QFETCH(double, step);
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(int, ticks);
        const NiceRange r = niceTickRange(min, max, step);
        QCOMPARE(r.lo, lo);
        QCOMPARE(r.hi, hi);
        QCOMPARE(niceTickCount(r.lo, r.hi, step), ticks);
    }

    // The finest step whose widest label and the gap fit each interval: 10 px a character
    // and a 10 px gap, over 23 to 101 GiB.
    void stepFitsItsLabels()
    {
        const auto width = [](double value, double step) {
            return 10.0 * QString::number(value, 'f', niceTickDecimals(step)).size();
        };
        // 8 intervals of 10 (20 to 110): "110" is 30 px, so 40 px an interval is enough.
        QCOMPARE(fittingTickStep(23, 101, 8, 360, 10, width), 10.0);
        QCOMPARE(fittingTickStep(23, 101, 8, 359, 10, width), 20.0);
        // 20 to 120 in 5 intervals of 20 wants 200 px; 0 to 150 in 3 of 50 wants 120.
        QCOMPARE(fittingTickStep(23, 101, 8, 200, 10, width), 20.0);
        QCOMPARE(fittingTickStep(23, 101, 8, 199, 10, width), 50.0);
        // Nothing fits: the coarsest. No width yet: the finest.
        QCOMPARE(fittingTickStep(23, 101, 8, 10, 10, width), 100.0);
        QCOMPARE(fittingTickStep(23, 101, 8, 0, 10, width), 10.0);
        QCOMPARE(fittingTickStep(5, 5, 8, 400, 10, width), 0.0);
    }

    // A real model's axis in GiB, round ticks, and bytes to px and back.
    void gibAxisMapsBudgets()
    {
        PlannerChart chart;
        chart.setPlotWidth(WidePlot);
        chart.setAxisMinBytes(23 * GiB + GiB / 2);
        chart.setAxisMaxBytes(101 * GiB);
        QVERIFY(!chart.inMiB());
        QCOMPARE(chart.budgetStep(), 10.0);
        QCOMPARE(chart.budgetMin(), 20.0);
        QCOMPARE(chart.budgetMax(), 110.0);
        QCOMPARE(chart.budgetTickCount(), 10);
        QCOMPARE(chart.budgetLabelFormat(), QStringLiteral("%.0f GiB"));
        QCOMPARE(chart.budgetLabel(40, 10), QStringLiteral("40 GiB"));
        QCOMPARE(chart.sliderMax(), 110.0);
        QCOMPARE(chart.sliderStep(), 0.25);
        QCOMPARE(chart.xOf(20 * GiB), 0.0);
        QCOMPARE(chart.xOf(65 * GiB), WidePlot / 2);
        QCOMPARE(chart.xOf(110 * GiB), WidePlot);
        QCOMPARE(chart.bytesAt(42.5), 42 * GiB + GiB / 2);
        QCOMPARE(chart.bytesAt(chart.budgetMin()), 20 * GiB);

        chart.setBudgetBytes(38 * GiB);
        QCOMPARE(chart.budgetValue(), 38.0);
        QCOMPARE(chart.budgetX(), WidePlot / 5);
        chart.setFloorBytes(29 * GiB);
        QCOMPARE(chart.refusedWidth(), WidePlot / 10);
        // The cliff's zone runs to the plot's right edge; a floor off the axis refuses nothing.
        chart.setCliffBytes(101 * GiB);
        QVERIFY(chart.cliffZoneShown());
        QCOMPARE(chart.cliffX(), WidePlot * 0.9);
        QCOMPARE(chart.cliffZoneWidth(), WidePlot / 10);
        chart.setCliffBytes(0);
        QVERIFY(!chart.cliffZoneShown());
        chart.setFloorBytes(10 * GiB);
        QCOMPARE(chart.refusedWidth(), 0.0);
    }

    // A tiny model's axis in MiB, with steps finer than one; a plot too narrow for any
    // finer labels takes the coarsest step.
    void mibAxisForTinyModels()
    {
        PlannerChart chart;
        chart.setPlotWidth(WidePlot);
        chart.setAxisMinBytes(10 * MiB + MiB / 4);
        chart.setAxisMaxBytes(12 * MiB);
        QVERIFY(chart.inMiB());
        QCOMPARE(chart.budgetStep(), 0.5);
        QCOMPARE(chart.budgetMin(), 10.0);
        QCOMPARE(chart.budgetMax(), 12.0);
        QCOMPARE(chart.budgetTickCount(), 5);
        QCOMPARE(chart.budgetLabelFormat(), QStringLiteral("%.1f MiB"));
        QCOMPARE(chart.budgetLabel(10.4, 0.2), QStringLiteral("10.4 MiB"));
        QCOMPARE(chart.sliderStep(), 0.05);
        QCOMPARE(chart.bytesAt(11.5), 11 * MiB + MiB / 2);
        QCOMPARE(chart.xOf(11 * MiB), WidePlot / 2);

        QSignalSpy axes(&chart, &PlannerChart::axesChanged);
        chart.setPlotWidth(1);
        QCOMPARE(axes.count(), 1);
        QCOMPARE(chart.budgetStep(), 2.0);
        QCOMPARE(chart.budgetMin(), 10.0);
        QCOMPARE(chart.budgetMax(), 12.0);
        QCOMPARE(chart.budgetTickCount(), 2);
        // The same inputs again change nothing.
        chart.setPlotWidth(1);
        QCOMPARE(axes.count(), 1);

        // Crossing 4 GiB switches the unit.
        chart.setAxisMaxBytes(4 * GiB);
        QVERIFY(!chart.inMiB());
    }

    // Tokens/s from 0 to a round top a little over the fastest prediction.
    void speedAxisTopIsRound()
    {
        PlannerChart chart;
        chart.setMaxTokensPerSecond(0.05);
        QCOMPARE(chart.speedStep(), 0.02);
        QCOMPARE(chart.speedMax(), 0.06);
        QCOMPARE(chart.speedTickCount(), 4);
        QCOMPARE(chart.speedLabelFormat(), QStringLiteral("%.2f"));
        chart.setMaxTokensPerSecond(4205);
        QCOMPARE(chart.speedStep(), 2000.0);
        QCOMPARE(chart.speedMax(), 6000.0);
        QCOMPARE(chart.speedTickCount(), 4);
        QCOMPARE(chart.speedLabelFormat(), QStringLiteral("%.0f"));
        // No prediction yet: 0 to 0.1.
        chart.setMaxTokensPerSecond(0);
        QCOMPARE(chart.speedMax(), 0.1);
        QCOMPARE(chart.speedTickCount(), 3);
    }

    // Marks off the axis are left out, the rest come by budget; two at one budget take two
    // rows; one at the plot's right edge writes its name left of its line.
    void marksKeepApart()
    {
        PlannerChart chart;
        chart.setPlotWidth(WidePlot);
        chart.setAxisMinBytes(20 * GiB);
        chart.setAxisMaxBytes(100 * GiB);
        chart.setMarks({mark(QStringLiteral("cliff"), 60 * GiB), mark(QStringLiteral("floor"), 30 * GiB),
                        mark(QStringLiteral("default"), 30 * GiB), mark(QStringLiteral("off the axis"), 200 * GiB),
                        mark(QStringLiteral("none"), -1), mark(QStringLiteral("edge"), 100 * GiB)});
        const QVariantList placed = chart.placedMarks();
        QCOMPARE(placed.size(), 4);
        QStringList names;
        for (const QVariant &m : placed)
            names << m.toMap().value(QStringLiteral("name")).toString();
        QCOMPARE(names, (QStringList{QStringLiteral("floor"), QStringLiteral("default"), QStringLiteral("cliff"), QStringLiteral("edge")}));
        const QVariantMap floor = placed[0].toMap(), def = placed[1].toMap(), cliff = placed[2].toMap(), edge = placed[3].toMap();
        QCOMPARE(floor.value(QStringLiteral("lineX")).toDouble(), WidePlot / 8);
        QCOMPARE(floor.value(QStringLiteral("color")).value<QColor>(), QColor(Qt::red));
        // Right of the line by the gap and the padding, first row.
        QCOMPARE(floor.value(QStringLiteral("labelX")).toDouble(), WidePlot / 8 + 6);
        QCOMPARE(floor.value(QStringLiteral("labelY")).toDouble(), 2.0);
        QCOMPARE(def.value(QStringLiteral("labelX")).toDouble(), floor.value(QStringLiteral("labelX")).toDouble());
        QVERIFY(def.value(QStringLiteral("labelY")).toDouble() > floor.value(QStringLiteral("labelY")).toDouble() + 10);
        QCOMPARE(cliff.value(QStringLiteral("labelY")).toDouble(), 2.0);
        QVERIFY(edge.value(QStringLiteral("labelX")).toDouble() < WidePlot - 10);
        QCOMPARE(edge.value(QStringLiteral("labelY")).toDouble(), 2.0);
        QCOMPARE(chart.markBackdropMargin(), -2.0);
    }

    // The chart keeps room for a plot and its labels at any font size.
    void minimumHeightGrowsWithTheFont()
    {
        PlannerChart chart;
        chart.setLabelPixelSize(11);
        QCOMPARE(chart.minimumHeight(), 166.0);
        chart.setLabelPixelSize(20);
        QCOMPARE(chart.minimumHeight(), 220.0);
    }

    // The forecast in the axis unit; no speed point where none is predicted.
    void seriesInAxisUnits()
    {
        PlannerChart chart;
        chart.setAxisMaxBytes(100 * GiB);
        QSignalSpy series(&chart, &PlannerChart::seriesChanged);
        const auto point = [](qint64 budget, double tokensPerSecond, double hitRate) {
            return QVariantMap{{QStringLiteral("budget"), budget},
                               {QStringLiteral("tokensPerSecond"), tokensPerSecond},
                               {QStringLiteral("hitRate"), hitRate}};
        };
        chart.setPoints({point(30 * GiB, 0, 0.25), point(60 * GiB + GiB / 2, 0.5, 0.9)});
        QCOMPARE(series.count(), 1);
        QCOMPARE(chart.speedPoints(), (QVariantList{QPointF(60.5, 0.5)}));
        QCOMPARE(chart.hitPoints(), (QVariantList{QPointF(30, 25), QPointF(60.5, 90)}));
        // A change of the plot's width moves no point.
        chart.setPlotWidth(500);
        QCOMPARE(series.count(), 1);
    }
};

QTEST_MAIN(TestPlannerChart)
#include "tst_plannerchart.moc"
