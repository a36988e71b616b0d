// The main window: loads without a QML warning, every page is reachable, and a screenshot
// of each page (light and dark) is written to <build>/screenshots for people to look at.
#include "studioapplication.h"

#include "engine/enginecontroller.h"
#include "settings/appsettings.h"
#include "chat/chatcontroller.h"
#include "planner/plannercontroller.h"
#include "windowtest.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>


class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        // A fresh data folder of its own: no chats or settings left from an earlier run.
        WindowTest::useOwnAppData(QStringLiteral("main-window test"));
        WindowTest::collectWarnings();
    }

    void loadsEveryPageWithoutWarnings()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine engine;
        QQuickWindow *window = WindowTest::showMainWindow(engine);
        QVERIFY(window);

        // A model open and a short conversation, so the pages show real content.
        QSignalSpy planned(services->planner.get(), &PlannerController::planChanged);
        services->engine->openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 30000);
        ChatController *chat = services->chat.get();
        chat->setMaxTokens(48);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY2(chat->send(QStringLiteral("Hello! What can you do?")), qPrintable(chat->notice()));
        QVERIFY(saved.wait(30000));
        QVERIFY(chat->send(QStringLiteral("Write a short C function that adds two numbers.")));
        QVERIFY(saved.wait(30000));
        QCOMPARE(chat->messages()->rowCount(), 4);
        QTRY_VERIFY_WITH_TIMEOUT(services->planner->ready(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(chat->contextUsed() > 0, 10000);

        QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
        const QStringList pages = window->property("pageNames").toStringList();
        QCOMPARE(pages.size(), 5);
        for (const QString theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
            services->settings->setTheme(theme);
            for (int i = 0; i < pages.size(); ++i) {
                window->setProperty("currentPage", i);
                QTest::qWait(150);
                auto *stack = window->findChild<QQuickItem *>(QStringLiteral("pages"));
                QVERIFY(stack);
                QCOMPARE(stack->property("currentIndex").toInt(), i);
                const QImage shot = window->grabWindow();
                QVERIFY(!shot.isNull());
                const QString file = QStringLiteral(WASTE_SCREENSHOT_DIR "/%1-%2.png").arg(pages[i].toLower(), theme);
                QVERIFY2(shot.save(file), qPrintable(file));
                // The Planner says how long a first prompt takes to read at the chosen budget
                // (forecast.prefill): planner-prefill.png.
                if (pages[i] == QLatin1String("Planner") && theme == QLatin1String("light")) {
                    const QString sentence = services->planner->budgetSentence();
                    QVERIFY2(sentence.contains(QStringLiteral("-token prompt reads in about")), qPrintable(sentence));
                    QVERIFY(shot.save(QStringLiteral(WASTE_SCREENSHOT_DIR "/planner-prefill.png")));
                }
            }
        }
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void statusBarShowsEngineState()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine engine;
        QVERIFY(StudioApplication::loadMainWindow(engine));
        auto *root = engine.rootObjects().first();
        auto *state = root->findChild<QObject *>(QStringLiteral("statusState"));
        QVERIFY(state);
        QCOMPARE(state->property("text").toString(), QStringLiteral("no model"));

        // A container that does not exist: the engine thread reports a readable error.
        QSignalSpy failed(services->engine.get(), &EngineController::modelOpenFailed);
        services->engine->openModel(QStringLiteral("/nonexistent/model.waste"));
        QVERIFY(failed.wait(10000));
        QCOMPARE(services->engine->state(), EngineController::Failed);
        QVERIFY(!services->engine->errorString().isEmpty());
        QCOMPARE(state->property("text").toString(), QStringLiteral("error"));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestMainWindow t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_mainwindow.moc"
