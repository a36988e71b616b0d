// The small things a new user tripped over, each checked in the real window: a drop-down's
// highlighted row is readable (not white on white); the data folder does not read
// "WASTE Studio/WASTE Studio"; a file whose transfer recovered loses its old retry reason;
// the token counter says what an empty chat's count is made of; the hub address (from
// HF_ENDPOINT) is shown in Settings and can be set there.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "download/downloadfilemodel.h"
#include "download/downloadmanager.h"
#include "engine/enginecontroller.h"
#include "faultyhub.h"
#include "settings/appsettings.h"
#include "settings/datafolder.h"
#include "windowtest.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QTest>

#include <cmath>

namespace {

double luminance(const QColor &c)
{
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QQuickItem *item(QQuickWindow *window, const char *name)
{
    return window->findChild<QQuickItem *>(QString::fromLatin1(name));
}

} // namespace

class TestPolish : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("polish test"));
        WindowTest::collectWarnings();
    }

    void dropDownRowsAreReadable()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        for (const QString theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
            services->settings->setTheme(theme);
            QTest::keyClick(window, Qt::Key_Comma, Qt::ControlModifier); // Settings
            auto *box = item(window, "themeBox");
            QVERIFY(box);
            QTRY_VERIFY(box->isVisible());
            const QPointF centre = box->mapToScene(QPointF(box->width() / 2, box->height() / 2));
            QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
            QObject *popup = box->property("popup").value<QObject *>();
            QVERIFY(popup);
            QTRY_VERIFY(popup->property("opened").toBool());
            // The row of the selected theme is the highlighted one when the list opens.
            QQuickItem *row = nullptr;
            for (QQuickItem *d : WindowTest::allItems(window->contentItem()))
                if (d->inherits("QQuickItemDelegate") && d->property("highlighted").toBool() && d->isVisible())
                    row = d;
            QVERIFY(row);
            auto *label = row->property("contentItem").value<QQuickItem *>();
            auto *background = row->property("background").value<QQuickItem *>();
            QVERIFY(label && background);
            const QColor text = label->property("color").value<QColor>();
            const QColor back = background->isVisible() ? background->property("color").value<QColor>()
                                                        : box->property("palette").value<QPalette>().color(QPalette::Base);
            QVERIFY2(contrast(text, back) >= 4.5, qPrintable(QStringLiteral("%1: %2 on %3").arg(theme, text.name(), back.name())));
            QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
            window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/settings-dropdown-%1.png").arg(theme));
            QTest::keyClick(window, Qt::Key_Escape); // the list
            QTRY_VERIFY(!popup->property("opened").toBool());
            QTest::keyClick(window, Qt::Key_Escape); // the dialog
            QObject *dialog = window->findChild<QObject *>(QStringLiteral("settingsDialog"));
            QVERIFY(dialog);
            QTRY_VERIFY(!dialog->property("visible").toBool());
        }
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void theHubAddressIsShownAndSettable()
    {
        qputenv("HF_ENDPOINT", "https://mirror.example.org");
        auto services = StudioApplication::createServices();
        services->downloads->setEndpoint(QString());
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        QTest::keyClick(window, Qt::Key_Comma, Qt::ControlModifier);
        auto *field = item(window, "endpointField");
        auto *source = item(window, "endpointSource");
        QVERIFY(field && source);
        QTRY_VERIFY(field->isVisible());
        QVERIFY(source->property("text").toString().contains(QLatin1String("https://mirror.example.org")));
        QVERIFY(source->property("text").toString().contains(QLatin1String("HF_ENDPOINT")));
        // Typed in the field and confirmed: the downloads use it, and it is kept.
        field->forceActiveFocus();
        WindowTest::typeText(window, QStringLiteral("http://127.0.0.1:9"));
        QTest::keyClick(window, Qt::Key_Return);
        QCOMPARE(services->downloads->endpoint(), QStringLiteral("http://127.0.0.1:9"));
        QCOMPARE(services->downloads->effectiveEndpoint(), QStringLiteral("http://127.0.0.1:9"));
        QTRY_VERIFY(source->property("text").toString().contains(QLatin1String("saved here")));
        services->downloads->setEndpoint(QString());
        qunsetenv("HF_ENDPOINT");
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void theDataFolderIsNotDoubled()
    {
        // As the app names itself (organisation and application "WASTE Studio").
        const QString testName = QCoreApplication::applicationName();
        QCoreApplication::setApplicationName(QStringLiteral("WASTE Studio"));
        const QString doubled = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        QVERIFY(doubled.endsWith(QLatin1String("WASTE Studio/WASTE Studio"))); // what Qt gives
        // An earlier version's files there are moved up, not lost (a name of this test's own:
        // other tests run as "WASTE Studio" too and keep their chats in the folder).
        QDir().mkpath(doubled);
        QFile old(doubled + QStringLiteral("/polish-moved-up.txt"));
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("kept");
        old.close();
        const QString folder = appDataFolder();
        QVERIFY2(!folder.contains(QLatin1String("WASTE Studio/WASTE Studio")), qPrintable(folder));
        QVERIFY(folder.endsWith(QLatin1String("/WASTE Studio")));
        QFile moved(folder + QStringLiteral("/polish-moved-up.txt"));
        QVERIFY(moved.open(QIODevice::ReadOnly));
        QCOMPARE(moved.readAll(), QByteArray("kept"));
        QVERIFY(!QFileInfo::exists(doubled + QStringLiteral("/polish-moved-up.txt")));
        QFile::remove(folder + QStringLiteral("/polish-moved-up.txt"));
        QCoreApplication::setApplicationName(testName);
    }

    void aRecoveredFileLosesItsRetryReason()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        const QString repo = QStringLiteral("tiny/Retry-Test");
        hub.addFile(repo, QStringLiteral("model.safetensors"), FaultyHub::randomContent(3000000, 9));
        hub.addFault(QStringLiteral("model.safetensors"), {FaultyHub::Fault::CutAfter, 300000, 0, -1, 0, 0});
        hub.setBytesPerSecond(600000);
        qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());
        auto services = StudioApplication::createServices();
        // Inside the test's own data folder: the setting outlives this test, and the next
        // test's services create the folder again, which a temporary directory would leave
        // behind in /tmp after every run.
        services->settings->setModelsFolder(appDataFolder() + QStringLiteral("/retry-models"));
        DownloadManager *downloads = services->downloads.get();
        downloads->start(repo);
        DownloadFileModel *files = downloads->files();
        // The cut gives a retry with its reason; once bytes flow again the reason is gone.
        QTRY_VERIFY_WITH_TIMEOUT(files->rowCount() == 1 && files->data(files->index(0), DownloadFileModel::RetriesRole).toInt() >= 1, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(files->data(files->index(0), DownloadFileModel::OnDiskRole).toLongLong() > 900000, 20000);
        QCOMPARE(files->data(files->index(0), DownloadFileModel::StateRole).toInt(), static_cast<int>(FileState::Active));
        QCOMPARE(files->data(files->index(0), DownloadFileModel::ReasonRole).toString(), QString());
        downloads->cancel();
        QTRY_VERIFY(!downloads->hasJob());
        qunsetenv("HF_ENDPOINT");
    }

    void theTokenCounterExplainsAnEmptyChat()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->setProperty("currentPage", 3);
        services->engine->openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 30000);
        ChatController *chat = services->chat.get();
        chat->newConversation();
        auto *meter = item(window, "contextMeterText");
        QVERIFY(meter);
        // Nothing typed: whatever the count is, the meter says where it comes from.
        QTRY_VERIFY_WITH_TIMEOUT(chat->contextUsed() > 0, 10000);
        QTRY_VERIFY(meter->property("text").toString().contains(QLatin1String("before anything is typed")));
        // A message typed: the count is the conversation's, no note.
        chat->setDraft(QStringLiteral("Hello there"));
        QTRY_VERIFY_WITH_TIMEOUT(!meter->property("text").toString().contains(QLatin1String("before anything")), 10000);
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestPolish t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_polish.moc"
