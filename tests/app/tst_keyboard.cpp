// The main window on the keyboard alone, as a screen-reader user meets it: on every page Tab
// walks every control in turn and comes back round (no trap: the message box hands the focus
// on instead of typing a tab), Shift+Tab walks back, each control that takes the focus has an
// accessible name and is scrolled into view, and the shortcuts (switch pages, new chat, focus
// the message box, stop) do what they say.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "engine/enginecontroller.h"
#include "planner/plannercontroller.h"
#include "windowtest.h"

#include <QAccessible>
#include <QApplication>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

namespace {

QString describe(QQuickItem *item)
{
    if (!item)
        return QStringLiteral("(nothing)");
    QString name = item->objectName();
    if (QAccessibleInterface *a = QAccessible::queryAccessibleInterface(item))
        name += QLatin1Char('"') + a->text(QAccessible::Name) + QLatin1Char('"');
    return QString::fromLatin1(item->metaObject()->className()) + QLatin1Char(' ') + name;
}

// The name a screen reader announces: the item's own, else that of the control it is part
// of (the text field inside an editable SpinBox or ComboBox is announced as that control).
QString accessibleName(QQuickItem *item)
{
    for (QQuickItem *i = item; i; i = i->parentItem()) {
        QAccessibleInterface *a = QAccessible::queryAccessibleInterface(i);
        const QString name = a ? a->text(QAccessible::Name).trimmed() : QString();
        if (!name.isEmpty() || i->inherits("QQuickControl"))
            return name;
    }
    return {};
}

// Whether a person can see the item: visible, with its centre inside the window and inside
// every clipping ancestor (a ScrollView's viewport).
bool onScreen(QQuickWindow *window, QQuickItem *item)
{
    if (!item->isVisible() || item->width() <= 0 || item->height() <= 0)
        return false;
    const QPointF centre = item->mapToScene(QPointF(item->width() / 2, item->height() / 2));
    if (!QRectF(0, 0, window->width(), window->height()).contains(centre))
        return false;
    for (QQuickItem *p = item->parentItem(); p; p = p->parentItem())
        if (p->clip() && !p->mapRectToScene(QRectF(0, 0, p->width(), p->height())).contains(centre))
            return false;
    return true;
}

// Every control on the page a person could reach: takes the focus on Tab, visible, enabled.
QList<QQuickItem *> tabStops(QQuickItem *root)
{
    QList<QQuickItem *> out;
    for (QQuickItem *item : WindowTest::allItems(root))
        if (item->activeFocusOnTab() && item->isVisible() && item->isEnabled() && item->width() > 0)
            out << item;
    return out;
}

} // namespace

class TestKeyboard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("keyboard test"));
        WindowTest::collectWarnings();
    }

    void tabWalksEveryControlOfEveryPage()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        // A model and one exchange, so the chat page has messages and their actions.
        services->engine->openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 30000);
        ChatController *chat = services->chat.get();
        chat->setMaxTokens(8);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY(chat->send(QStringLiteral("Hello")));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
        // The Planner's plan (the disk measured beside a decode kernel, the compute calibrated)
        // arrives off the GUI thread, and its page gains controls when it does: walked before,
        // a button appeared behind the walk.
        QTRY_VERIFY_WITH_TIMEOUT(services->planner->ready() && !services->planner->busy(), 60000);

        const QStringList pages = window->property("pageNames").toStringList();
        auto *stack = window->findChild<QQuickItem *>(QStringLiteral("pages"));
        QVERIFY(stack);
        for (int i = 0; i < pages.size(); ++i) {
            window->setProperty("currentPage", i);
            QTest::qWait(100);
            QQuickItem *page = stack->childItems().value(i);
            QVERIFY(page);
            QQuickItem *start = WindowTest::itemsNamed(window->contentItem(), QStringLiteral("railEntry") + pages[i]).value(0);
            QVERIFY2(start, qPrintable(pages[i]));
            start->forceActiveFocus(Qt::TabFocusReason);
            QTRY_VERIFY(start->hasActiveFocus());

            QList<QQuickItem *> forward{start};
            QSet<QQuickItem *> seen{start};
            bool cameBack = false;
            for (int step = 0; step < 300 && !cameBack; ++step) {
                QTest::keyClick(window, Qt::Key_Tab);
                QQuickItem *now = window->activeFocusItem();
                QVERIFY2(now, qPrintable(pages[i] + QStringLiteral(": the focus went nowhere")));
                QVERIFY2(now != forward.last(),
                         qPrintable(pages[i] + QStringLiteral(": Tab did not leave ") + describe(now)));
                if (now == start) {
                    cameBack = true;
                    break;
                }
                QVERIFY2(!seen.contains(now), qPrintable(pages[i] + QStringLiteral(": a loop without the rail at ") + describe(now)));
                QTest::qWait(20); // scrolled into view on the next frame
                QVERIFY2(!accessibleName(now).isEmpty(), qPrintable(pages[i] + QStringLiteral(": no accessible name: ") + describe(now)));
                QVERIFY2(onScreen(window, now), qPrintable(pages[i] + QStringLiteral(": focused but out of sight: ") + describe(now)));
                // A visible focus ring around it.
                QQuickItem *ring = WindowTest::itemsNamed(window->contentItem(), QStringLiteral("focusRing")).value(0);
                QVERIFY(ring);
                const QPointF centre = now->mapToScene(QPointF(now->width() / 2, now->height() / 2));
                QTRY_VERIFY2(ring->isVisible() && ring->mapRectToScene(QRectF(0, 0, ring->width(), ring->height())).contains(centre),
                             qPrintable(pages[i] + QStringLiteral(": no focus ring around ") + describe(now)));
                forward << now;
                seen.insert(now);
            }
            QVERIFY2(cameBack, qPrintable(pages[i] + QStringLiteral(": Tab never came back to the rail")));

            // Every reachable control of the page was on the walk.
            // (A view is a focus scope: Tab enters it at its current item, so a control inside
            // it counts as reaching it.)
            for (QQuickItem *stop : tabStops(page)) {
                const bool reached = seen.contains(stop)
                                     || std::any_of(seen.cbegin(), seen.cend(), [stop](QQuickItem *s) { return stop->isAncestorOf(s); });
                QVERIFY2(reached, qPrintable(pages[i] + QStringLiteral(": not reachable by Tab: ") + describe(stop)));
            }

            // Shift+Tab walks back along the same stops to the rail: every step goes to an
            // earlier stop (a view's current item, entered forwards through its focus scope, may
            // be passed over backwards).
            forward.last()->forceActiveFocus(Qt::TabFocusReason);
            qsizetype at = forward.size() - 1;
            for (int step = 0; step < 300 && at > 0; ++step) {
                QTest::keyClick(window, Qt::Key_Backtab, Qt::ShiftModifier);
                const qsizetype back = forward.indexOf(window->activeFocusItem());
                QVERIFY2(back >= 0 && back < at,
                         qPrintable(pages[i] + QStringLiteral(": Shift+Tab from ") + describe(forward[at])
                                    + QStringLiteral(" went to ") + describe(window->activeFocusItem())));
                at = back;
            }
            QCOMPARE(at, qsizetype(0));
            qInfo("%s: %lld tab stops", qPrintable(pages[i]), qlonglong(forward.size()));
        }
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void theMessageBoxIsNoTrapAndTheShortcutsWork()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        services->engine->openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 30000);
        ChatController *chat = services->chat.get();
        chat->newConversation(); // not the one the first test left in the shared database
        const QStringList pages = window->property("pageNames").toStringList();

        // Ctrl+2 … switch pages; Ctrl+L brings the chat forward with the message box focused.
        window->setProperty("currentPage", 0);
        QTest::keyClick(window, Qt::Key_2, Qt::ControlModifier);
        QCOMPARE(pages.at(window->property("currentPage").toInt()), QStringLiteral("Convert"));
        QTest::keyClick(window, Qt::Key_L, Qt::ControlModifier);
        QCOMPARE(pages.at(window->property("currentPage").toInt()), QStringLiteral("Chat"));
        auto *composer = window->findChild<QQuickItem *>(QStringLiteral("composer"));
        QVERIFY(composer);
        QTRY_VERIFY(composer->hasActiveFocus());

        // Tab leaves the box (no tab character typed), Shift+Tab comes back.
        WindowTest::typeText(window, QStringLiteral("Hi"));
        QTest::keyClick(window, Qt::Key_Tab);
        QVERIFY(!composer->hasActiveFocus());
        QCOMPARE(composer->property("text").toString(), QStringLiteral("Hi"));
        QCOMPARE(window->activeFocusItem()->objectName(), QStringLiteral("sendButton"));
        QTest::keyClick(window, Qt::Key_Backtab, Qt::ShiftModifier);
        QVERIFY(composer->hasActiveFocus());

        // Ctrl+Enter sends, as Enter does; Esc stops the answer.
        chat->setMaxTokens(2000);
        // Greedy: a sampled answer of the demo model can end by itself before Esc lands.
        chat->setTemperature(0);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QTest::keyClick(window, Qt::Key_Return, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(chat->generating(), 10000);
        QCOMPARE(composer->property("text").toString(), QString());
        QTRY_VERIFY_WITH_TIMEOUT(!chat->messages()->index(1).data(MessageModel::TextRole).toString().isEmpty(), 10000);
        QTest::keyClick(window, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
        QVERIFY(!chat->generating());
        QCOMPARE(chat->messages()->index(1).data(MessageModel::FinishReasonRole).toString(), QStringLiteral("cancelled"));
        // The "stopped" marker is in sight, above the message box, not behind it.
        auto *list = window->findChild<QQuickItem *>(QStringLiteral("messageList"));
        QVERIFY(list);
        const QRectF view = list->mapRectToScene(QRectF(0, 0, list->width(), list->height()));
        QQuickItem *marker = nullptr;
        QTRY_VERIFY([&] {
            for (QQuickItem *i : WindowTest::allItems(list))
                if (i->isVisible() && i->property("text").toString().contains(QStringLiteral(" · stopped")))
                    marker = i;
            return marker != nullptr;
        }());
        QTRY_VERIFY2(view.contains(marker->mapRectToScene(QRectF(0, 0, marker->width(), marker->height()))),
                     "the stopped marker is cut off at the bottom of the messages");

        // Ctrl+N: a new chat, the message box ready.
        window->setProperty("currentPage", 0);
        QTest::keyClick(window, Qt::Key_N, Qt::ControlModifier);
        QCOMPARE(pages.at(window->property("currentPage").toInt()), QStringLiteral("Chat"));
        QCOMPARE(chat->messages()->rowCount(), 0);
        QTRY_VERIFY(composer->hasActiveFocus());
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestKeyboard t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_keyboard.moc"
