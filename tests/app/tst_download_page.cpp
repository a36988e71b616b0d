// The Models page with a real download: the app's services, Main.qml, and a FaultyHub as the
// hub (HF_ENDPOINT). The page starts the download from its repository field, shows the disk
// line, the bars and the file list, offers Convert when every file is verified (which opens
// the Convert page), and lists the result in the library. Also the library's scan and its
// guarded delete. Screenshots go to <build>/screenshots/models-*.png.
#include "studioapplication.h"

#include "download/downloadmanager.h"
#include "library/modellibrary.h"
#include "engine/enginecontroller.h"
#include "faultyhub.h"
#include "windowtest.h"
#include "settings/appsettings.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

void writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
}

QQuickItem *findItem(QObject *root, const char *name)
{
    return root->findChild<QQuickItem *>(QString::fromLatin1(name));
}
} // namespace

class TestDownloadPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("download-page test"));
        // A clean slate: settings in a temporary folder (never the user's), no queue from an
        // earlier run of this test.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_tmp.filePath(QStringLiteral("settings")));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_tmp.filePath(QStringLiteral("settings")));
        WindowTest::collectWarnings();
    }

    void downloadFromThePageThenConvert()
    {
        FaultyHub hub;
        QVERIFY(hub.start());
        const QString repo = QStringLiteral("tiny/Kimi-Linear-Test");
        hub.addFile(repo, QStringLiteral("config.json"), FaultyHub::randomContent(400, 1), false);
        hub.addFile(repo, QStringLiteral("model-00001-of-00002.safetensors"), FaultyHub::randomContent(900000, 2));
        hub.addFile(repo, QStringLiteral("model-00002-of-00002.safetensors"), FaultyHub::randomContent(700000, 3));
        hub.addFault(QStringLiteral("model-00001-of-00002.safetensors"), {FaultyHub::Fault::CutAfter, 300000, 0, -1, 0, 0});
        hub.setBytesPerSecond(1500000);
        qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());

        auto services = StudioApplication::createServices();
        services->settings->setModelsFolder(m_tmp.filePath(QStringLiteral("models")));
        QAbstractItemModelTester tester(services->downloads->files(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QQmlApplicationEngine engine;
        QQuickWindow *window = WindowTest::showMainWindow(engine);
        QVERIFY(window);
        window->setProperty("currentPage", 0);

        auto *help = findItem(window, "firstRunHelp");
        QVERIFY(help);
        QVERIFY(help->isVisible()); // no model open: the page explains how to get one

        auto *field = findItem(window, "repoField");
        QVERIFY(field);
        field->setProperty("text", repo);
        auto *start = findItem(window, "startButton");
        QVERIFY(start);
        QSignalSpy finished(services->downloads.get(), &DownloadManager::finished);
        QMetaObject::invokeMethod(start, "clicked");

        // Mid-download: the bars and the disk line are up.
        QTRY_COMPARE_WITH_TIMEOUT(services->downloads->state(), JobState::Running, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(services->downloads->doneBytes() > 200000, 10000);
        auto *disk = findItem(window, "diskLine");
        QVERIFY(disk);
        QVERIFY2(disk->isVisible(), qPrintable(QStringLiteral("hasJob %1 free %2 files %3 state %4 text %5")
                                                   .arg(services->downloads->hasJob()).arg(services->downloads->freeBytes())
                                                   .arg(services->downloads->fileCount()).arg(jobStateName(services->downloads->state()), disk->property("text").toString())));
        QVERIFY2(disk->property("text").toString().contains(QLatin1String("for the container")), qPrintable(disk->property("text").toString()));
        QVERIFY(findItem(window, "totalProgress")->isVisible());
        QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
        window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/models-downloading-light.png"));

        QVERIFY(finished.wait(30000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        const QString dest = m_tmp.filePath(QStringLiteral("models/tiny--Kimi-Linear-Test"));
        QCOMPARE(services->downloads->destination(), dest);
        for (const QString &p : hub.paths(repo)) {
            QFile f(dest + QLatin1Char('/') + p);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(f.readAll(), hub.content(repo, p));
        }
        auto *convert = findItem(window, "convertButton");
        QVERIFY(convert);
        QTRY_VERIFY(convert->isVisible());
        QTest::qWait(100);
        window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/models-done-light.png"));
        QMetaObject::invokeMethod(convert, "clicked");
        QTRY_COMPARE(window->property("currentPage").toInt(), 1); // the Convert page

        // The finished download is in the library as a source.
        auto *page = findItem(window, "modelsPage");
        QVERIFY(page);
        ModelLibrary *library = page->findChild<ModelLibrary *>();
        QVERIFY(library);
        QTRY_COMPARE_WITH_TIMEOUT(library->rowCount(), 1, 5000);
        QCOMPARE(library->data(library->index(0), ModelLibrary::KindRole).toString(), QStringLiteral("source"));
        QCOMPARE(library->data(library->index(0), ModelLibrary::BytesRole).toLongLong(), qint64(400 + 900000 + 700000));

        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
        services->downloads->cancel(); // forget the job for the next test
        QTRY_VERIFY(!services->downloads->hasJob());
        qunsetenv("HF_ENDPOINT");
    }

    void libraryScanAndGuardedDelete()
    {
        const QString root = m_tmp.filePath(QStringLiteral("lib"));
        writeFile(root + QStringLiteral("/k3.waste/manifest.json"), "{}");
        writeFile(root + QStringLiteral("/k3.waste/trunk.bin"), QByteArray(5000, 'x'));
        writeFile(root + QStringLiteral("/owner--src/config.json"), "{}");
        writeFile(root + QStringLiteral("/owner--src/model.safetensors"), QByteArray(3000, 'y'));
        writeFile(root + QStringLiteral("/owner--half/model.safetensors.part"), QByteArray(100, 'z'));
        writeFile(root + QStringLiteral("/notes/readme.txt"), "hello");
        const auto entries = ModelLibrary::scan(root);
        QCOMPARE(entries.size(), 3);
        QCOMPARE(entries[0].name, QStringLiteral("k3.waste"));
        QCOMPARE(entries[0].kind, QStringLiteral("container"));
        QCOMPARE(entries[0].bytes, 5002);
        QCOMPARE(entries[1].kind, QStringLiteral("partial download"));
        QCOMPARE(entries[2].kind, QStringLiteral("source"));

        ModelLibrary library;
        QAbstractItemModelTester tester(&library, QAbstractItemModelTester::FailureReportingMode::QtTest);
        library.setFolder(root);
        QTRY_COMPARE(library.rowCount(), 3);
        QSignalSpy removed(&library, &ModelLibrary::removed);
        // Outside the models folder: refused, nothing touched.
        library.remove(m_tmp.filePath(QStringLiteral("models")));
        QCOMPARE(removed.size(), 1);
        QVERIFY(!removed.first().at(2).toString().isEmpty());
        QVERIFY(QDir(m_tmp.filePath(QStringLiteral("models"))).exists());
        library.remove(root + QStringLiteral("/k3.waste/../../lib"));
        QCOMPARE(removed.size(), 2);
        QVERIFY(!removed.last().at(2).toString().isEmpty());
        // Inside: deleted, with the bytes freed.
        library.remove(root + QStringLiteral("/owner--src"));
        QTRY_COMPARE(removed.size(), 3);
        QCOMPARE(removed.last().at(2).toString(), QString());
        QCOMPARE(removed.last().at(1).toLongLong(), 3002);
        QVERIFY(!QDir(root + QStringLiteral("/owner--src")).exists());
        QTRY_COMPARE(library.rowCount(), 2);
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestDownloadPage t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_download_page.moc"
