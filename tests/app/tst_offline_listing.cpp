// The Models page with no network: pressing the Kimi K3 preset while the hub cannot be
// reached shows, within seconds, what failed and when it is tried again (not an endless
// "Reading the file list…"), the preset's tooltip does not stay on screen, and Cancel clears
// it all. The other releases, picked from the "More releases" list, go the same way.
#include "studioapplication.h"

#include "download/downloadmanager.h"
#include "windowtest.h"

#include <QApplication>
#include <QStyleHints>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTcpServer>
#include <QTest>

namespace {

// The preset's tooltip on screen: its text in a visible item of the window (the shared
// ToolTip lives in the window's overlay while shown).
bool toolTipShown(QQuickWindow *window, const QString &text)
{
    for (QQuickItem *item : WindowTest::allItems(window->contentItem()))
        if (item->isVisible() && item->property("text").toString() == text)
            return true;
    return false;
}

} // namespace

class TestOfflineListing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        // As on a desktop with a mouse: controls react to hovering (offscreen says they need not).
        QGuiApplication::styleHints()->setUseHoverEffects(true);
        WindowTest::useOwnAppData(QStringLiteral("offline-listing test"));
        WindowTest::collectWarnings();
    }

    void theKimiK3PresetOfflineSaysWhatFailedWithinSeconds()
    {
        // A hub address where nothing listens: what a machine without a network gets.
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const quint16 port = probe.serverPort();
        probe.close();
        qputenv("HF_ENDPOINT", QStringLiteral("http://127.0.0.1:%1").arg(port).toUtf8());

        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->setProperty("currentPage", 0);
        QTest::qWait(100);

        QQuickItem *preset = WindowTest::itemsNamed(window->contentItem(), QStringLiteral("presetKimiK3")).value(0);
        QVERIFY(preset && preset->isVisible());
        const QPoint centre = preset->mapToScene(QPointF(preset->width() / 2, preset->height() / 2)).toPoint();
        QTest::mouseMove(window, centre);
        QString tip;
        for (const QVariant &p : services->downloads->presets()) {
            const QVariantMap m = p.toMap();
            if (m.value(QStringLiteral("name")).toString() == QLatin1String("Kimi K3"))
                tip = m.value(QStringLiteral("repo")).toString() + QStringLiteral(" — ") + m.value(QStringLiteral("note")).toString();
        }
        QVERIFY(!tip.isEmpty());
        QTRY_VERIFY(toolTipShown(window, tip)); // the pointer rests on it: the repository is named
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre);

        auto *reason = window->findChild<QQuickItem *>(QStringLiteral("jobReason"));
        QVERIFY(reason);
        QTRY_VERIFY_WITH_TIMEOUT(reason->isVisible(), 5000);
        QVERIFY2(clock.elapsed() < 5000, "the failure took more than a few seconds to show");
        const QString text = reason->property("text").toString();
        // Refused connections fail at once and the first waits are short, so on a loaded machine the
        // text may already name a later attempt by the time it is read: any attempt past the first will do.
        QVERIFY2(text.contains(QLatin1String("Could not read the file list")) && text.contains(QLatin1String("Trying again in"))
                     && QRegularExpression(QStringLiteral("attempt ([2-9]|10) of")).match(text).hasMatch(),
                 qPrintable(text));
        // The pointer has not moved, yet the tooltip is gone.
        QTRY_VERIFY_WITH_TIMEOUT(!toolTipShown(window, tip), 10000);

        // Cancel: the job and its reason go.
        services->downloads->cancel();
        QTRY_VERIFY(!services->downloads->hasJob());
        QTRY_VERIFY(!reason->isVisible());

        // The other releases are one list: picking DeepSeek-R1 there puts its repository in
        // the field and checks its files the same way (offline: the same clear failure).
        auto *more = WindowTest::itemsNamed(window->contentItem(), QStringLiteral("morePresets")).value(0);
        QVERIFY(more && more->isVisible());
        const QVariantList releases = more->property("releases").toList();
        int r1 = -1;
        for (int i = 0; i < releases.size(); ++i)
            if (releases[i].toMap().value(QStringLiteral("name")).toString() == QLatin1String("DeepSeek-R1"))
                r1 = i;
        QVERIFY(r1 >= 0);
        WindowTest::clickCentre(window, more);
        QTRY_VERIFY(more->property("popup").value<QObject *>()->property("opened").toBool());
        // Toward R1 one key at a time, each press seen before the next: where the highlight starts
        // when the popup opens is the popup's business (it has started past R1, and presses sent
        // faster than they were handled have overshot it on a loaded machine).
        for (int i = 0; i <= 2 * releases.size() && more->property("highlightedIndex").toInt() != r1; ++i) {
            const int before = more->property("highlightedIndex").toInt();
            QTest::keyClick(window, before < r1 ? Qt::Key_Down : Qt::Key_Up);
            QTRY_VERIFY_WITH_TIMEOUT(more->property("highlightedIndex").toInt() != before, 3000);
        }
        QCOMPARE(more->property("highlightedIndex").toInt(), r1);
        QTest::keyClick(window, Qt::Key_Return);
        auto *repoField = WindowTest::itemsNamed(window->contentItem(), QStringLiteral("repoField")).value(0);
        QVERIFY(repoField);
        QTRY_COMPARE(repoField->property("text").toString(), QStringLiteral("deepseek-ai/DeepSeek-R1-0528"));
        QCOMPARE(more->property("displayText").toString(), QStringLiteral("More releases…"));
        QTRY_VERIFY_WITH_TIMEOUT(reason->isVisible(), 5000);
        QVERIFY2(reason->property("text").toString().contains(QLatin1String("Could not read the file list")),
                 qPrintable(reason->property("text").toString()));
        services->downloads->cancel();
        QTRY_VERIFY(!services->downloads->hasJob());

        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
        qunsetenv("HF_ENDPOINT");
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestOfflineListing t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_offline_listing.moc"
