// The Planner page in the real main window on a K3-size plan (the full-size manifest, the
// engine's own planner) shown for a 64 GB machine: the chart reaches the paging cliff and
// draws the region past it, the budget past the cliff is said in words, and the whole page
// fits a 900x600 window. Screenshots, light and dark, go to <build>/screenshots.
#include "studioapplication.h"

#include "planner/engineplansource.h"
#include "planner/plannercontroller.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <QApplication>
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

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
        // The planner for a 64 GB machine with 10 GiB held by other programs (the reference's
        // laptop); the model's side is the engine's plan of the full-size K3 manifest.
        services->planner.reset();
        MachineOverride machine;
        machine.physical = 64 * GiB;
        machine.other = 10 * GiB;
        machine.diskGBps = 6.0; // a manifest has no expert file to measure
        services->planner = std::make_unique<PlannerController>(std::make_shared<EnginePlanSource>(machine), nullptr);
        PlannerController *planner = services->planner.get();
        QSignalSpy planned(planner, &PlannerController::planChanged);
        planner->setContainer(QStringLiteral(WASTE_FIXTURES_DIR "/k3-full-manifest"));
        QVERIFY(planned.wait(120000)); // includes the first compute calibration
        QVERIFY2(planner->ready(), qPrintable(planner->error()));

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

        auto *zone = window->findChild<QQuickItem *>(QStringLiteral("cliffZone"));
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

        QString shotError;
        QVERIFY2(WindowTest::shootBothThemes(window, services->settings.get(), QStringLiteral("planner-k3-cliff-%1"), &shotError),
                 qPrintable(shotError));
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
