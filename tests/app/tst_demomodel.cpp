// First run: with no model configured the app writes the engine's tiny demo container
// into its data folder (off the GUI thread) and opens it, and the chat answers with it.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "demo/demomodel.h"
#include "engine/enginecontroller.h"
#include "settings/appsettings.h"
#include "settings/datafolder.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

class TestDemoModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("WASTE Studio demo test"));
        QCoreApplication::setOrganizationName(QStringLiteral("WASTE Studio"));
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
        QDir(appDataFolder()).removeRecursively();
        QFile::remove(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral(".conf"));
    }

    void firstRunWritesAndOpensTheDemo()
    {
        auto services = StudioApplication::createServices();
        DemoModel *demo = services->demo.get();
        QVERIFY(demo->needed());
        QVERIFY(!demo->active());

        QElapsedTimer clock;
        clock.start();
        StudioApplication::openStartupModel(*services);
        QCOMPARE(demo->state(), DemoModel::Writing);
        // The GUI thread stays free while the container is written: the call returned while the
        // state still says Writing. The bound only catches a blocking write; it is loose so that a
        // loaded CI machine cannot trip it.
        QVERIFY(clock.elapsed() < 2000);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 120000);
        QCOMPARE(demo->state(), DemoModel::Ready);
        QVERIFY(demo->active());
        QVERIFY(QFile::exists(demo->path() + QStringLiteral("/manifest.json")));
        // The demo is not remembered as the user's model.
        QVERIFY(services->settings->lastModelPath().isEmpty());

        ChatController *chat = services->chat.get();
        chat->setMaxTokens(16);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY2(chat->send(QStringLiteral("Hello demo")), qPrintable(chat->notice()));
        QVERIFY(saved.wait(60000));
        QCOMPARE(chat->messages()->rowCount(), 2);
        QVERIFY(chat->messages()->index(1).data(MessageModel::TokensRole).toInt() > 0);
    }

    void secondRunReopensTheWrittenDemo()
    {
        auto services = StudioApplication::createServices();
        QVERIFY(services->demo->needed());
        StudioApplication::openStartupModel(*services);
        // Already on disk: opened at once, nothing written again.
        QCOMPARE(services->demo->state(), DemoModel::Ready);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 60000);
        QVERIFY(services->demo->active());
    }
};

QTEST_GUILESS_MAIN(TestDemoModel)
#include "tst_demomodel.moc"
