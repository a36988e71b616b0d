// A remote engine added and used through the real window (offscreen), with the mouse and the
// keyboard as a person would: Models → "Add remote engine…", type the address of a running
// `waste serve`, List models, Add and open; the library lists it as a remote engine, the chat
// answers through it, and the Planner says it runs on the remote engine instead of showing
// RAM figures. No QML warning on the way; screenshots in build/screenshots/remote-*.png.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "engine/enginecontroller.h"
#include "remote/remotestore.h"
#include "wasteserveprocess.h"
#include "windowtest.h"

#include <QApplication>
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

namespace {

bool shoot(QQuickWindow *window, const QString &name)
{
    QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
    return window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/remote-%1.png").arg(name));
}

} // namespace

class TestRemoteWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("remote-window test"));
        WindowTest::collectWarnings();
    }

    void addOpenChatAndPlan()
    {
        WasteServe server(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(server.start(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), {"--model-id", "tiny-remote"}),
                 qPrintable(server.error()));

        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->setProperty("currentPage", 0); // Models
        QTest::qWait(100);

        auto *dialog = WindowTest::findNamed(window, QStringLiteral("remoteEngineDialog"));
        QVERIFY(dialog);
        QVERIFY(QMetaObject::invokeMethod(dialog, "open"));
        QTRY_VERIFY(dialog->property("opened").toBool());

        auto *url = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("remoteUrlField")));
        QVERIFY(url);
        WindowTest::clickCentre(window, url);
        QTRY_VERIFY(url->hasActiveFocus());
        WindowTest::typeText(window, QStringLiteral("127.0.0.1:%1").arg(server.port()));
        QCOMPARE(url->property("text").toString(), QStringLiteral("127.0.0.1:%1").arg(server.port()));

        auto *list = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("remoteListButton")));
        QVERIFY(list);
        WindowTest::clickCentre(window, list);
        auto *box = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("remoteModelBox")));
        QVERIFY(box);
        QTRY_COMPARE_WITH_TIMEOUT(box->property("currentText").toString(), QStringLiteral("tiny-remote"), 20000);
        QVERIFY(shoot(window, "dialog"));

        auto *add = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("remoteAddButton")));
        QVERIFY(add);
        QVERIFY(add->isEnabled());
        WindowTest::clickCentre(window, add);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 20000);
        QVERIFY(services->engine->isRemote());
        QCOMPARE(services->engine->modelName(), QStringLiteral("tiny-remote (remote)"));
        QTRY_VERIFY(!dialog->property("visible").toBool());
        QCOMPARE(remotestore::list().size(), 1);
        QTest::qWait(300); // the library's rescan
        QVERIFY(shoot(window, "library"));

        ChatController *chat = services->chat.get();
        chat->setMaxTokens(16);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY2(chat->send(QStringLiteral("Hello over there")), qPrintable(chat->notice()));
        QVERIFY(saved.wait(30000));
        QCOMPARE(chat->messages()->index(1).data(MessageModel::ErrorRole).toString(), QString());
        QVERIFY(!chat->messages()->index(1).data(MessageModel::TextRole).toString().isEmpty());
        window->setProperty("currentPage", 3); // Chat
        QTest::qWait(150);
        QVERIFY(shoot(window, "chat"));

        window->setProperty("currentPage", 2); // Planner
        QTest::qWait(150);
        auto *planner = qobject_cast<QQuickItem *>(WindowTest::findNamed(window, QStringLiteral("plannerRemote")));
        QVERIFY(planner);
        QVERIFY(planner->isVisible());
        QVERIFY(shoot(window, "planner"));

        services->engine->closeModel();
        QCOMPARE(services->engine->state(), EngineController::NoModel);
        QVERIFY(!planner->isVisible());
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestRemoteWindow t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_remote_window.moc"
