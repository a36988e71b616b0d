// Planning a release before the download: the Models page's card fetches the repository's
// config.json from a (local) hub and says, for this machine or a chosen one, the floor, the
// default and the speed, or what it lacks. Full-size Kimi K3 on 64 GB gives the reference's
// floor and default; on 16 GB it will not fit.
#include "planner/releaseplancontroller.h"
#include "settings/appsettings.h"
#include "units/units.h"

#include "faultyhub.h"

#include <waste/release_plan.hpp>

#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

namespace {

constexpr qint64 GiB = qint64(1) << 30;

QByteArray k3Config()
{
    QFile f(QStringLiteral(WASTE_FIXTURES_DIR "/release-configs/kimi-k3.json"));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestReleasePlan : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void k3FromTheHubOnA64GBMachine()
    {
        AppSettings settings(nullptr);
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(QStringLiteral("moonshotai/Kimi-K3"), QStringLiteral("config.json"), k3Config(), false);

        ReleasePlanController plan;
        plan.setEndpoint(hub.endpoint());
        plan.setMachineRam(64 * GiB);
        plan.setRepo(QStringLiteral("https://huggingface.co/moonshotai/Kimi-K3"));
        QCOMPARE(plan.repo(), QStringLiteral("moonshotai/Kimi-K3"));
        QTRY_COMPARE_WITH_TIMEOUT(plan.state(), ReleasePlanController::Ready, 60000);
        QVERIFY(plan.fits());

        // The same figures as the engine's plan of the config (tst_release_plan checks those
        // against the reference: floor 29.06 GiB, default 46.25 GiB on 64 GB).
        waste::ReleasePlanOptions o;
        o.ramBytes = 64 * GiB;
        const waste::ReleasePlan rp = waste::planRelease(k3Config().toStdString(), o);
        QVERIFY(std::abs(double(rp.vq.plan.floor_bytes) / GiB - 29.06) < 0.3);
        QVERIFY(std::abs(double(waste::resolveBudget(rp.vq.plan, 0).budget_bytes) / GiB - 46.25) < 0.5);
        // The headline plans the container Convert makes by default: K3's experts kept as MXFP4.
        QCOMPARE(QString::fromStdString(rp.convertDefault().expert_format), QStringLiteral("MXFP4"));
        const qint64 floor = rp.convertDefault().plan.floor_bytes;
        const qint64 def = waste::resolveBudget(rp.convertDefault().plan, 0).budget_bytes;
        const QString expected = QStringLiteral("On a 64.0 GiB machine: floor %1, default %2").arg(Units::bytes(floor), Units::bytes(def));
        QVERIFY2(plan.headline().startsWith(expected), qPrintable(plan.headline() + " / " + expected));
        // Where the cliff lies, and what 128 GiB would give.
        QVERIFY2(plan.details().contains(QStringLiteral("The paging cliff lies at %1").arg(Units::bytes(rp.convertDefault().plan.cliff_bytes))),
                 qPrintable(plan.details()));
        // 128 GiB is named where it helps (with no disk measured, the next size up); where this
        // machine's disk bounds the speed, the details say more RAM would not help.
        QVERIFY2(plan.details().contains(QStringLiteral("With 128 GiB of RAM: default"))
                     || plan.details().contains(QStringLiteral("More RAM would not make it much faster from this disk")),
                 qPrintable(plan.details()));
        QVERIFY2(plan.details().contains(QStringLiteral("(MXFP4 experts, as Convert makes it)")), qPrintable(plan.details()));
        QVERIFY2(plan.details().contains(QStringLiteral("Converted with VQ3R experts instead, the container takes %1 and the floor is %2")
                                             .arg(Units::bytes(rp.vq.container_bytes), Units::bytes(rp.vq.plan.floor_bytes))),
                 qPrintable(plan.details()));

        // Compare machines: on 16 GiB the floor alone does not fit.
        plan.setMachineRam(16 * GiB);
        QTRY_COMPARE_WITH_TIMEOUT(plan.state(), ReleasePlanController::Ready, 60000);
        QVERIFY(!plan.fits());
        QVERIFY2(plan.headline().startsWith(QStringLiteral("On a 16.0 GiB machine it will not fit: needs %1 of RAM").arg(Units::bytes(floor))),
                 qPrintable(plan.headline()));
        QCOMPARE(plan.machines().size(), 5);
    }

    // Before the download the card draws the Planner's chart of the release as Convert makes
    // it: the same floor, default and cliff as the sentences, the predicted speed along the
    // budget (the headline's speed at the default), on the chosen machine. The disk is the
    // models folder's: here the test containers' folder, so there is a speed to draw.
    void theChartOfAReleaseBeforeDownload()
    {
        AppSettings settings(nullptr);
        settings.setModelsFolder(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container"));
        ReleasePlanController plan;
        QVERIFY(plan.chart());
        QVERIFY(!plan.chartShown());
        plan.setMachineRam(64 * GiB);
        plan.planConfig(k3Config());
        QTRY_COMPARE_WITH_TIMEOUT(plan.state(), ReleasePlanController::Ready, 60000);
        QVERIFY2(plan.chartShown(), qPrintable(plan.headline()));
        PlannerController *chart = plan.chart();
        QTRY_VERIFY_WITH_TIMEOUT(!chart->points().isEmpty() && !chart->busy(), 60000);

        waste::ReleasePlanOptions o;
        o.ramBytes = 64 * GiB;
        const waste::ReleasePlan rp = waste::planRelease(k3Config().toStdString(), o);
        const waste::MemoryPlan &p = rp.convertDefault().plan;
        QCOMPARE(chart->floorBytes(), p.floor_bytes);
        QCOMPARE(chart->defaultBytes(), waste::resolveBudget(p, 0).budget_bytes);
        QCOMPARE(chart->cliffBytes(), p.cliff_bytes);
        // The curve runs from the floor past the cliff, and its speed at the default is the
        // headline's.
        const QVariantList points = chart->points();
        QCOMPARE(points.first().toMap().value("budget").toLongLong(), p.floor_bytes);
        QVERIFY(points.last().toMap().value("budget").toLongLong() > p.cliff_bytes);
        double atDefault = -1;
        for (const QVariant &v : points)
            if (v.toMap().value("budget").toLongLong() == chart->defaultBytes())
                atDefault = v.toMap().value("tokensPerSecond").toDouble();
        QVERIFY(atDefault > 0);
        QVERIFY2(plan.headline().contains(QStringLiteral("about %1 tok/s").arg(atDefault >= 10 ? QString::number(atDefault, 'f', 0)
                                                                               : atDefault >= 1 ? QString::number(atDefault, 'f', 1)
                                                                               : atDefault >= 0.1 ? QString::number(atDefault, 'f', 2)
                                                                                                  : QString::number(atDefault, 'g', 2))),
                 qPrintable(plan.headline() + " / " + QString::number(atDefault)));
        // Another machine: the chart follows.
        plan.setMachineRam(128 * GiB);
        QTRY_VERIFY_WITH_TIMEOUT(plan.state() == ReleasePlanController::Ready && !chart->busy()
                                     && chart->cliffBytes() > p.cliff_bytes, 60000);
    }

    // A larger machine is named only where it helps: where the release first fits, or the
    // speed at least doubles; else the details say more RAM would not make it much faster.
    void aLargerMachineOnlyWhereItHelps()
    {
        ReleasePlanController::Figures f;
        f.floor = 10 * GiB;
        f.defaultBudget = 20 * GiB;
        f.usable = f.physical = 24 * GiB;
        f.cliff = 20 * GiB;
        f.tokPerS = 0.0017;
        f.largestRam = 256 * GiB;
        f.largestTokPerS = 0.0019;
        const QString d = ReleasePlanController::detailsFor(f);
        QVERIFY2(!d.contains(QStringLiteral("With 32.0 GiB")), qPrintable(d));
        QVERIFY2(d.contains(QStringLiteral("More RAM would not make it much faster from this disk: with 256 GiB, about 0.0019 tok/s.")),
                 qPrintable(d));
        f.largerRam = 64 * GiB;
        f.largerDefault = 50 * GiB;
        f.largerTokPerS = 0.5;
        QVERIFY(ReleasePlanController::detailsFor(f).contains(QStringLiteral("With 64.0 GiB of RAM: default 50.0 GiB, about 0.50 tok/s.")));
    }

    void aRepositoryWithoutAConfigSaysSo()
    {
        AppSettings settings(nullptr);
        FaultyHub hub;
        QVERIFY(hub.start());
        hub.addFile(QStringLiteral("someone/weights-only"), QStringLiteral("model.safetensors"), QByteArray(64, 'x'), false);
        ReleasePlanController plan;
        plan.setEndpoint(hub.endpoint());
        plan.setRepo(QStringLiteral("someone/weights-only"));
        QTRY_COMPARE_WITH_TIMEOUT(plan.state(), ReleasePlanController::Failed, 30000);
        QVERIFY2(plan.error().contains(QStringLiteral("no config.json")), qPrintable(plan.error()));
    }

    void sentencesFromFigures()
    {
        ReleasePlanController::Figures f;
        f.floor = 29 * GiB;
        f.defaultBudget = 46 * GiB;
        f.usable = f.physical = 64 * GiB;
        f.cliff = 49 * GiB;
        f.tokPerS = 0.63;
        QCOMPARE(ReleasePlanController::headlineFor(f),
                 QStringLiteral("On this machine: floor 29.0 GiB, default 46.0 GiB, about 0.63 tok/s from this disk."));
        f.diskFree = 100 * GiB;
        f.diskNeeded = 2000 * GiB;
        f.fits = false;
        QCOMPARE(ReleasePlanController::headlineFor(f),
                 QStringLiteral("On this machine it will not fit: needs 2.0 TiB of disk (100 GiB free)."));
        f.floor = 60 * GiB;
        QVERIFY(ReleasePlanController::detailsFor(f).startsWith(QStringLiteral("Even the floor is past the paging cliff")));
        // Speeds priced without a measured decode say so, as the Planner page does.
        QVERIFY(!ReleasePlanController::detailsFor(f).contains(QStringLiteral("not measured")));
        f.decodeScaleFallback = QStringLiteral("no temporary folder");
        QVERIFY(ReleasePlanController::detailsFor(f).contains(
            QStringLiteral("The decode was not measured on this machine (no temporary folder)")));
        f.tokPerS = f.largerTokPerS = 0;
        QVERIFY(!ReleasePlanController::detailsFor(f).contains(QStringLiteral("not measured")));
    }
};

QTEST_GUILESS_MAIN(TestReleasePlan)
#include "tst_releaseplan.moc"
