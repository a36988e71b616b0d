// The whole way from a hub repository to a chat, in one run, the way a new user goes:
// the Models page downloads a tiny model from a loopback hub (FaultyHub, as HF_ENDPOINT),
// Convert opens the Convert page with everything filled in and checked, Start shows the
// progress at the top of the page, Done leaves no stale "interrupted" notice, the library
// lists the new container without Refresh, and "Open in chat" lands in a chat with the
// model open, which answers. A screenshot of each step: <build>/screenshots/flow-*.png.
// The steps are HubToChatFlow's (tests/support); tst_flow_families goes the same way with
// the other families' releases.
#include "studioapplication.h"

#include "hubtochatflow.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QTemporaryDir>
#include <QTest>

class TestFlow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("flow test"));
        WindowTest::collectWarnings();
    }

    void fromAHubRepositoryToAChat()
    {
        // The hub holds a tiny Kimi-Linear model as a hub repository holds the real one.
        const QString source = m_tmp.filePath(QStringLiteral("hf"));
        waste::makeTinyHf(source.toStdString(), {});
        HubToChatFlow flow(QStringLiteral("flow"));
        const QString repo = QStringLiteral("tiny/Kimi-Linear-Flow");
        flow.publish(repo, source);
        // A models folder that does not exist yet: the app makes it.
        flow.showWindow(m_tmp.filePath(QStringLiteral("not-yet/models")));
        if (!QTest::currentTestFailed())
            flow.download(repo);
        if (!QTest::currentTestFailed())
            flow.convert();
        if (!QTest::currentTestFailed())
            flow.openInChat();
        if (!QTest::currentTestFailed())
            flow.send(QStringLiteral("Hello"), 12);
        if (!QTest::currentTestFailed())
            flow.shot(QStringLiteral("6-chat"));
        if (!QTest::currentTestFailed())
            flow.checkLibraryMarksOpenModel();
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestFlow t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_flow.moc"
