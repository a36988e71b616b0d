// "Use this budget" on the model that is open (issue 18): the Planner re-opens it at that
// budget, with the re-opening shown while the engine loads, and the budget is kept for that
// container alone: a second container planned next keeps its own default. Real engine, real
// planner source, on the reference fixtures.
#include "studioapplication.h"

#include "engine/enginecontroller.h"
#include "planner/plannercontroller.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTest>

namespace {
const QString kFixtures = QStringLiteral(WASTE_FIXTURES_DIR);
}

class TestPlannerReopen : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("planner-reopen test"));
    }

    void useThisBudgetReopensTheOpenModelAtIt()
    {
        auto services = StudioApplication::createServices();
        EngineController *engine = services->engine.get();
        PlannerController *planner = services->planner.get();
        AppSettings *settings = services->settings.get();
        const QString a = QDir::cleanPath(kFixtures + QStringLiteral("/reference-container/r3.waste"));
        const QString b = QDir::cleanPath(kFixtures + QStringLiteral("/k3-container/k3s1.waste"));
        settings->setBudgetFor(a, 0);
        settings->setBudgetFor(b, 0);

        engine->openModel(a, 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 60000);
        const qint64 opened = engine->budgetBytes();
        QVERIFY(opened > 0);

        planner->setContainer(a);
        QTRY_VERIFY_WITH_TIMEOUT(planner->ready(), 120000); // the first plan also calibrates compute
        QVERIFY2(planner->error().isEmpty(), qPrintable(planner->error()));
        // The engine's default is the Planner's (the state checkpoint is inside it): the status
        // line and the page say the same budget, and applying it to the model open at it
        // reopens nothing.
        QCOMPARE(opened, planner->defaultBytes());
        QTRY_COMPARE_WITH_TIMEOUT(planner->budget(), planner->defaultBytes(), 10000);
        {
            QSignalSpy same(engine, &EngineController::modelChanged);
            planner->applyBudget();
            QVERIFY(!planner->reopening());
            QTest::qWait(200);
            QCOMPARE(same.count(), 0);
        }

        // A budget between the floor and what the model opened with: not the one in use.
        const qint64 chosen = planner->floorBytes() + (opened - planner->floorBytes()) / 2;
        QVERIFY(chosen > planner->floorBytes() && chosen != opened && chosen != planner->defaultBytes());
        planner->setBudget(chosen);
        QVERIFY(!planner->budgetApplied());

        QSignalSpy reopened(engine, &EngineController::modelChanged);
        planner->applyBudget();
        QVERIFY(planner->reopening()); // shown at once, while the engine loads
        QCOMPARE(settings->budgetFor(a), chosen);
        QTRY_VERIFY_WITH_TIMEOUT(reopened.count() > 0 && engine->state() == EngineController::Ready, 60000);
        QCOMPARE(QDir::cleanPath(engine->modelPath()), a);
        QCOMPARE(engine->budgetBytes(), chosen); // the open model now runs at it
        QTRY_VERIFY_WITH_TIMEOUT(!planner->reopening(), 10000);
        QVERIFY(planner->budgetApplied());

        // Applying it again changes nothing: the model already runs at it.
        const int opens = reopened.count();
        planner->applyBudget();
        QVERIFY(!planner->reopening());
        QTest::qWait(200);
        QCOMPARE(reopened.count(), opens);

        // Another container: planned at its own default, A's budget not carried over.
        const qint64 floorA = planner->floorBytes();
        planner->setContainer(b);
        QTRY_VERIFY_WITH_TIMEOUT(planner->ready() && planner->floorBytes() != floorA, 60000);
        QTRY_COMPARE_WITH_TIMEOUT(planner->budget(), planner->defaultBytes(), 10000);
        QCOMPARE(settings->budgetFor(b), 0);
        QCOMPARE(settings->budgetFor(a), chosen);
        QCOMPARE(engine->budgetBytes(), chosen); // the open model A is left as it is
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestPlannerReopen t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_planner_reopen.moc"
