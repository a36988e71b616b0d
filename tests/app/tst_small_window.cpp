// Every page in a 900×600 window (a laptop with a dock, a tiled half screen): no control is
// cut off or pushed out of the window, controls inside a scrolled page are never wider than
// its view (nothing hides sideways), the Models page's Download button and the Convert page's
// Check and Start buttons are in sight without scrolling, the
// Settings dialog fits, and a screenshot of each page (and of Settings) is written to
// <build>/screenshots/PAGE-900x600.png.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "engine/enginecontroller.h"
#include "planner/plannercontroller.h"
#include "windowtest.h"

#include <QApplication>
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

namespace {

QString describe(QQuickItem *item)
{
    return QString::fromLatin1(item->metaObject()->className()) + QLatin1Char(' ') + item->objectName() + QLatin1String(" \"")
           + item->property("text").toString() + QLatin1Char('"');
}

QQuickItem *flickableAround(QQuickItem *item, QQuickItem *stop)
{
    for (QQuickItem *p = item->parentItem(); p && p != stop; p = p->parentItem())
        if (p->inherits("QQuickFlickable"))
            return p;
    return nullptr;
}

bool shown(QQuickItem *item, QQuickItem *stop)
{
    for (QQuickItem *p = item; p && p != stop; p = p->parentItem())
        if (!p->isVisible() || p->opacity() == 0)
            return false;
    return item->width() > 0 && item->height() > 0;
}

} // namespace

class TestSmallWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("small-window test"));
        WindowTest::collectWarnings();
    }

    void everyPageFitsAt900x600()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->resize(900, 600);
        QTRY_COMPARE(window->width(), 900);
        QTRY_COMPARE(window->height(), 600);
        // A model open and an answer, so the pages show what they show in use.
        services->engine->openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 30000);
        ChatController *chat = services->chat.get();
        chat->setMaxTokens(24);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY(chat->send(QStringLiteral("Hello! What can you do?")));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(services->planner->ready(), 30000);

        const QStringList pages = window->property("pageNames").toStringList();
        auto *stack = window->findChild<QQuickItem *>(QStringLiteral("pages"));
        QVERIFY(stack);
        QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
        QStringList problems;
        for (int i = 0; i < pages.size(); ++i) {
            window->setProperty("currentPage", i);
            QTest::qWait(200);
            QQuickItem *page = stack->childItems().value(i);
            QVERIFY(page);
            const QRectF pageRect = page->mapRectToScene(QRectF(0, 0, page->width(), page->height()));
            const QString file = QStringLiteral(WASTE_SCREENSHOT_DIR "/%1-900x600.png").arg(pages[i]);
            QVERIFY2(window->grabWindow().save(file), qPrintable(file));
            for (QQuickItem *item : WindowTest::allItems(page)) {
                if (!item->activeFocusOnTab() || !shown(item, page))
                    continue;
                const QRectF r = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
                if (QQuickItem *flick = flickableAround(item, page)) {
                    // In a scrolled view: reachable by scrolling down, never cut at the sides.
                    const QRectF view = flick->mapRectToScene(QRectF(0, 0, flick->width(), flick->height()));
                    if (r.left() < view.left() - 1 || r.right() > view.right() + 1)
                        problems << pages[i] + QStringLiteral(": wider than its view: ") + describe(item);
                } else if (!pageRect.adjusted(-1, -1, 1, 1).contains(r)) {
                    problems << pages[i] + QStringLiteral(": cut off: ") + describe(item)
                                    + QStringLiteral(" at %1,%2 %3×%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
                }
            }
            if (pages[i] == QLatin1String("Models")) {
                auto *download = window->findChild<QQuickItem *>(QStringLiteral("startButton"));
                QVERIFY(download && download->isVisible());
                const QRectF r = download->mapRectToScene(QRectF(0, 0, download->width(), download->height()));
                QVERIFY2(pageRect.contains(r), "the Download button is out of sight at 900×600");
            }
            if (pages[i] == QLatin1String("Convert")) {
                // Checking the source and starting are both in sight without scrolling.
                for (const QString name : {QStringLiteral("convertCheck"), QStringLiteral("convertStart")}) {
                    auto *button = window->findChild<QQuickItem *>(name);
                    QVERIFY2(button && button->isVisible(), qPrintable(name));
                    const QRectF r = button->mapRectToScene(QRectF(0, 0, button->width(), button->height()));
                    QVERIFY2(pageRect.contains(r) && !flickableAround(button, page),
                             qPrintable(name + QStringLiteral(" is below the fold at 900×600")));
                }
            }
        }
        // Settings is a dialog over the pages: all of it inside the window.
        QTest::keyClick(window, Qt::Key_Comma, Qt::ControlModifier);
        QObject *dialog = window->findChild<QObject *>(QStringLiteral("settingsDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        auto *dialogItem = dialog->property("contentItem").value<QQuickItem *>();
        QVERIFY(dialogItem);
        QVERIFY2(window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/Settings-900x600.png")), "Settings screenshot");
        const QRectF windowRect(0, 0, window->width(), window->height());
        for (QQuickItem *item : WindowTest::allItems(dialogItem->parentItem())) {
            if (!item->activeFocusOnTab() || !item->isVisible())
                continue;
            const QRectF r = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
            if (!windowRect.adjusted(-1, -1, 1, 1).contains(r))
                problems << QStringLiteral("Settings: cut off: ") + describe(item);
        }
        QTest::keyClick(window, Qt::Key_Escape);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestSmallWindow t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_small_window.moc"
