// The Planner page in the real main window on a K3-size plan (the full-size manifest, the
// engine's own planner) shown for a 64 GB machine: the chart reaches the paging cliff and
// draws the region past it, the budget past the cliff is said in words, and the whole page
// fits a 900x600 window with the chart still readable: a plot of some height, names on the
// marked budgets that never overlap, axis titles in the tick labels' colour, round ticks;
// and with the font set larger while the page is open, every label on the chart still whole.
// Screenshots, light and dark, go to <build>/screenshots.
#include "studioapplication.h"

#include "planner/engineplansource.h"
#include "planner/plannercontroller.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QDir>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QQmlApplicationEngine>
#include <QQmlListReference>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <utility>

namespace {

constexpr qint64 GiB = qint64(1) << 30;

// Every visible item with an accessible button or slider role must lie inside the window.
QStringList outside(QQuickItem *item, const QQuickWindow *window)
{
    QStringList out;
    if (!item->isVisible())
        return out;
    const QString name = item->objectName();
    if (name == QLatin1String("budgetSlider") || name == QLatin1String("applyBudgetButton") ||
        name == QLatin1String("budgetSentence") || name == QLatin1String("cliffText") ||
        name == QLatin1String("recalibrateButton")) {
        const QRectF r = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
        if (r.bottom() > window->height() + 0.5 || r.right() > window->width() + 0.5 || r.top() < -0.5)
            out << QStringLiteral("%1 at %2,%3 %4x%5").arg(name).arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
    }
    for (QQuickItem *c : item->childItems())
        out << outside(c, window);
    return out;
}

// The chart's axis named `name`: axes belong to the chart's scene, not to the QML tree.
QObject *chartAxis(QQuickItem *chart, const char *name)
{
    QQmlListReference axes(chart, "axes");
    for (qsizetype i = 0; i < axes.count(); ++i)
        if (axes.at(i) && axes.at(i)->objectName() == QLatin1String(name))
            return axes.at(i);
    return nullptr;
}

// A tick step a reader reads at a glance: 1, 2 or 5 times a power of ten.
bool roundStep(double step)
{
    if (!(step > 0))
        return false;
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    for (const double m : {1.0, 2.0, 5.0})
        if (std::abs(mantissa - m) < 1e-6)
            return true;
    return false;
}

// The planner for a 64 GB machine with 10 GiB held by other programs (the reference's
// laptop); the model's side is the engine's plan of the full-size K3 manifest. False (the
// reason logged) when no plan came.
bool planK3(StudioServices *services)
{
    services->planner.reset();
    MachineOverride machine;
    machine.physical = 64 * GiB;
    machine.other = 10 * GiB;
    machine.diskGBps = 6.0; // a manifest has no expert file to measure
    services->planner = std::make_unique<PlannerController>(std::make_shared<EnginePlanSource>(machine), nullptr);
    PlannerController *planner = services->planner.get();
    QSignalSpy planned(planner, &PlannerController::planChanged);
    planner->setContainer(QStringLiteral(WASTE_FIXTURES_DIR "/k3-full-manifest"));
    if (!planned.wait(120000)) { // includes the first compute calibration
        qWarning("no K3 plan within 120 s");
        return false;
    }
    if (!planner->ready())
        qWarning("K3 plan: %s", qPrintable(planner->error()));
    return planner->ready();
}

// The tick labels and titles the chart draws, each with where it lies in the chart item:
// Qt Charts draws them as text items of its own scene, not as QML items.
QList<QPair<QString, QRectF>> chartTexts(QQuickItem *chart)
{
    QList<QPair<QString, QRectF>> out;
    const auto scenes = chart->findChildren<QGraphicsScene *>();
    for (QGraphicsScene *scene : scenes)
        for (QGraphicsItem *item : scene->items())
            if (auto *text = dynamic_cast<QGraphicsTextItem *>(item); text && text->isVisible())
                out.append({text->toPlainText(), text->sceneBoundingRect()});
    return out;
}

// Why the rail, if anything, does not hold its entries at this size: every entry (the pages
// and Settings) inside the rail, and every text of the rail (the wordmark, the glyphs and
// names) whole inside its entry and the rail.
QStringList railOverflows(QQuickWindow *window)
{
    QStringList out;
    auto *rail = window->findChild<QQuickItem *>(QStringLiteral("navigationRail"));
    if (!rail)
        return {QStringLiteral("no navigationRail")};
    const QRectF railRect = rail->mapRectToScene(QRectF(0, 0, rail->width(), rail->height()));
    const auto inside = [](const QRectF &outer, const QRectF &r) { return outer.adjusted(-0.5, -0.5, 0.5, 0.5).contains(r); };
    const auto sceneRect = [](QQuickItem *i) { return i->mapRectToScene(QRectF(0, 0, i->width(), i->height())); };
    const auto textRect = [](QQuickItem *t) {
        // A text's painted extent: its implicit size where it is wider than its box.
        return t->mapRectToScene(QRectF(0, 0, std::max(t->width(), t->implicitWidth()), std::max(t->height(), t->implicitHeight())));
    };
    for (QQuickItem *item : rail->findChildren<QQuickItem *>()) {
        const QString name = item->objectName();
        if (!name.startsWith(QLatin1String("railEntry")) && name != QLatin1String("settingsButton"))
            continue;
        if (!inside(railRect, sceneRect(item)))
            out << name + QStringLiteral(" leaves the rail");
        for (QQuickItem *t : item->findChildren<QQuickItem *>())
            if (t->inherits("QQuickText") && t->isVisible() && !inside(sceneRect(item), textRect(t)))
                out << QStringLiteral("'%1' leaves %2").arg(t->property("text").toString(), name);
    }
    for (QQuickItem *t : rail->findChildren<QQuickItem *>())
        if (t->inherits("QQuickText") && t->property("text").toString() == QLatin1String("WASTE") && !inside(railRect, textRect(t)))
            out << QStringLiteral("the wordmark leaves the rail");
    return out;
}

} // namespace

class TestPlannerK3Window : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("planner k3 window test"));
        WindowTest::collectWarnings();
    }

    void showsTheCliffOnAK3PlanAndFits900x600()
    {
        auto services = StudioApplication::createServices();
        QVERIFY(planK3(services.get()));
        PlannerController *planner = services->planner.get();

        // K3 could use 80 GiB: more than 7/8 of 64. The chart reaches past the cliff.
        QVERIFY(planner->cliffInRange());
        QVERIFY(planner->axisMaxBytes() > planner->cliffBytes());
        bool past = false;
        for (const ForecastPoint &p : planner->forecast())
            past = past || p.pastCliff;
        QVERIFY(past);

        QQmlApplicationEngine engine;
        QQuickWindow *window = WindowTest::showMainWindow(engine);
        QVERIFY(window);
        window->resize(900, 600);
        window->setProperty("currentPage", 2);
        QTest::qWait(200);
        planner->setBudget(52 * GiB); // past the cliff: the sentence says what will happen
        QTest::qWait(200);

        // The Planner page's chart (a release plan card draws one of its own).
        auto *box = window->findChild<QQuickItem *>(QStringLiteral("plannerChartBox"));
        QVERIFY(box);
        auto *zone = box->findChild<QQuickItem *>(QStringLiteral("cliffZone"));
        QVERIFY(zone);
        QVERIFY(zone->isVisible());
        QVERIFY(zone->width() > 10);
        auto *sentence = window->findChild<QQuickItem *>(QStringLiteral("budgetSentence"));
        QVERIFY(sentence);
        QVERIFY2(sentence->property("text").toString().contains(QStringLiteral("expect about 8× slower")),
                 qPrintable(sentence->property("text").toString()));
        auto *cliff = window->findChild<QQuickItem *>(QStringLiteral("cliffText"));
        QVERIFY(cliff);
        QVERIFY(cliff->isVisible());

        const QStringList off = outside(window->contentItem(), window);
        QVERIFY2(off.isEmpty(), qPrintable(off.join(QLatin1String("; "))));

        // Nothing to scroll to at 900x600: the page fits, and the chart was not squashed to
        // make it fit (it was about 65 px of plot before the page was laid out for it).
        auto *scroll = window->findChild<QQuickItem *>(QStringLiteral("plannerScroll"));
        QVERIFY(scroll);
        QVERIFY2(scroll->property("contentHeight").toDouble() <= scroll->height() + 1,
                 qPrintable(QStringLiteral("page %1 px in a view of %2").arg(scroll->property("contentHeight").toDouble()).arg(scroll->height())));
        auto *chart = window->findChild<QQuickItem *>(QStringLiteral("plannerChartBox"))->findChild<QQuickItem *>(QStringLiteral("plannerChart"));
        QVERIFY(chart);
        const QRectF plot = chart->property("plotArea").toRectF();
        QVERIFY2(plot.height() >= 110, qPrintable(QStringLiteral("plot %1 px tall").arg(plot.height())));

        // The names on the marked budgets (floor, default, cliff, 7/8, other programs): all in
        // the plot, no two overlapping.
        const QList<QQuickItem *> marks =
            WindowTest::itemsNamed(window->findChild<QQuickItem *>(QStringLiteral("plannerChartBox")), QStringLiteral("chartMark"));
        QCOMPARE(marks.size(), 5);
        const QRectF plotInScene = chart->mapRectToScene(plot);
        for (int i = 0; i < marks.size(); ++i) {
            const QRectF a = marks[i]->mapRectToScene(QRectF(0, 0, marks[i]->width(), marks[i]->height()));
            const QString name = marks[i]->property("text").toString();
            QVERIFY2(plotInScene.adjusted(-0.5, -0.5, 0.5, 0.5).contains(a), qPrintable(name + QStringLiteral(" leaves the plot")));
            for (int j = i + 1; j < marks.size(); ++j) {
                const QRectF b = marks[j]->mapRectToScene(QRectF(0, 0, marks[j]->width(), marks[j]->height()));
                QVERIFY2(!a.intersects(b), qPrintable(name + QStringLiteral(" overlaps ") + marks[j]->property("text").toString()));
            }
        }

        // Axis titles in the tick labels' colour (the dark theme once drew them near-black);
        // round tick steps on the budget and speed axes, the speed axis topped at a tick.
        for (const char *axisName : {"speedAxis", "hitAxis"}) {
            QObject *axis = chartAxis(chart, axisName);
            QVERIFY2(axis, axisName);
            QCOMPARE(axis->property("titleBrush").value<QBrush>().color(), axis->property("labelsColor").value<QColor>());
        }
        // Round ticks: each axis runs between multiples of a 1-2-5 step, a tick on each.
        for (const char *axisName : {"budgetAxis", "speedAxis"}) {
            QObject *axis = chartAxis(chart, axisName);
            QVERIFY2(axis, axisName);
            const double lo = axis->property("min").toDouble(), hi = axis->property("max").toDouble();
            const int count = axis->property("tickCount").toInt();
            QVERIFY2(count >= 3, axisName);
            const double step = (hi - lo) / (count - 1);
            const QString what = QStringLiteral("%1: %2 to %3 in %4 ticks").arg(QLatin1String(axisName)).arg(lo).arg(hi).arg(count);
            QVERIFY2(roundStep(step), qPrintable(what));
            QVERIFY2(std::abs(lo / step - std::round(lo / step)) < 1e-6, qPrintable(what));
        }
        QObject *budgetAxis = chartAxis(chart, "budgetAxis");
        QVERIFY(budgetAxis->property("min").toDouble() * GiB <= planner->axisMinBytes());
        QVERIFY(budgetAxis->property("max").toDouble() * GiB >= planner->axisMaxBytes());
        QVERIFY(chartAxis(chart, "speedAxis")->property("max").toDouble() >= planner->maxTokensPerSecond());

        QString shotError;
        QVERIFY2(WindowTest::shootBothThemes(window, services->settings.get(), QStringLiteral("planner-k3-cliff-%1"), &shotError),
                 qPrintable(shotError));
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    // A person who reads better at a larger font sets it in Settings while the Planner is
    // open: the rail holds its entries and their names whole, and every tick label and axis
    // title on the chart stays whole (Qt Charts elides a
    // label that has no room to "…") and inside the chart and the window, from 18 px to 22.
    // Screenshots, light and dark, at each go to <build>/screenshots.
    void chartLabelsStayWholeAtLargeFonts()
    {
        auto services = StudioApplication::createServices();
        QVERIFY(planK3(services.get()));
        QQmlApplicationEngine engine;
        QQuickWindow *window = WindowTest::showMainWindow(engine);
        QVERIFY(window);
        window->setProperty("currentPage", 2);
        auto *chart = window->findChild<QQuickItem *>(QStringLiteral("plannerChartBox"))->findChild<QQuickItem *>(QStringLiteral("plannerChart"));
        QVERIFY(chart);
        // 18 and 20 px in the smallest window the app is laid out for (at 20 the budget axis
        // once elided its last labels to "100 …", "110 …"), 22 px in its first size (at 900 px
        // the page's header no longer fits at 22).
        for (const auto &[px, size] : {std::pair{18, QSize(900, 600)}, std::pair{20, QSize(900, 600)},
                                       std::pair{22, QSize(1180, 760)}}) {
            window->resize(size);
            services->settings->setFontSize(px);
            QTest::qWait(300); // the chart lays its axes out again
            // The picture first, so a failure below leaves it to look at.
            QString shotError;
            QVERIFY2(WindowTest::shootBothThemes(window, services->settings.get(),
                                                 QStringLiteral("planner-k3-font%1-").arg(px) + QStringLiteral("%1"), &shotError),
                     qPrintable(shotError));
            // The page's header: its title whole, its actions clear of it (beside it, or on a
            // row of their own).
            auto *page = window->findChild<QQuickItem *>(QStringLiteral("plannerPage"));
            QVERIFY(page);
            auto *title = page->findChild<QQuickItem *>(QStringLiteral("pageTitle"));
            auto *subtitle = page->findChild<QQuickItem *>(QStringLiteral("pageSubtitle"));
            auto *actions = page->findChild<QQuickItem *>(QStringLiteral("pageActions"));
            QVERIFY(title && subtitle && actions);
            QVERIFY2(!title->property("truncated").toBool() && !subtitle->property("truncated").toBool(),
                     qPrintable(QStringLiteral("at %1 px the page's title or subtitle is elided").arg(px)));
            const auto scene = [](QQuickItem *i) { return i->mapRectToScene(QRectF(0, 0, i->width(), i->height())); };
            QVERIFY2(!scene(actions).intersects(scene(title).united(scene(subtitle))),
                     qPrintable(QStringLiteral("at %1 px the page's actions overlap its title").arg(px)));
            QVERIFY2(scene(actions).right() <= window->width() + 0.5, qPrintable(QStringLiteral("at %1 px the actions leave the window").arg(px)));
            const QStringList rail = railOverflows(window);
            QVERIFY2(rail.isEmpty(), qPrintable(QStringLiteral("at %1 px: ").arg(px) + rail.join(QLatin1String("; "))));
            const auto texts = chartTexts(chart);
            QVERIFY2(texts.size() >= 10, qPrintable(QStringLiteral("%1 texts on the chart").arg(texts.size())));
            // The chart's own rectangle, cut to the window's.
            const QRectF bounds = QRectF(0, 0, chart->width(), chart->height())
                                      .intersected(chart->mapRectFromScene(QRectF(0, 0, window->width(), window->height())));
            for (const auto &[text, rect] : texts) {
                const QString where = QStringLiteral("at %1 px: '%2' at %3,%4 %5x%6").arg(px).arg(text)
                                          .arg(rect.x()).arg(rect.y()).arg(rect.width()).arg(rect.height());
                QVERIFY2(!text.contains(QChar(0x2026)) && !text.contains(QLatin1String("...")), qPrintable(where));
                QVERIFY2(bounds.adjusted(-0.5, -0.5, 0.5, 0.5).contains(rect), qPrintable(where + QStringLiteral(" leaves the chart or the window")));
            }
        }
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestPlannerK3Window t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_planner_k3_window.moc"
