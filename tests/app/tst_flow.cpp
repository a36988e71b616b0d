// The whole way from a hub repository to a chat, in one run, the way a new user goes:
// the Models page downloads a tiny model from a loopback hub (FaultyHub, as HF_ENDPOINT),
// Convert opens the Convert page with everything filled in and checked, Start shows the
// progress at the top of the page, Done leaves no stale "interrupted" notice, the library
// lists the new container without Refresh, and "Open in chat" lands in a chat with the
// model open, which answers. A screenshot of each step: <build>/screenshots/flow-*.png.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "convert/conversionjob.h"
#include "download/downloadmanager.h"
#include "download/modellibrary.h"
#include "engine/enginecontroller.h"
#include "faultyhub.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {

QQuickItem *item(QQuickWindow *window, const char *name)
{
    return window->findChild<QQuickItem *>(QString::fromLatin1(name));
}

// A mouse click at the centre of a visible item, as a person gives it.
void click(QQuickWindow *window, QQuickItem *target)
{
    QVERIFY(target && target->isVisible() && target->isEnabled());
    const QPointF centre = target->mapToScene(QPointF(target->width() / 2, target->height() / 2));
    QVERIFY2(QRectF(0, 0, window->width(), window->height()).contains(centre), qPrintable(target->objectName()));
    QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
}

void shot(QQuickWindow *window, const QString &step)
{
    QTest::qWait(150);
    QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
    const QString file = QStringLiteral(WASTE_SCREENSHOT_DIR "/flow-%1.png").arg(step);
    QVERIFY2(window->grabWindow().save(file), qPrintable(file));
}

} // namespace

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
        FaultyHub hub;
        QVERIFY(hub.start());
        const QString repo = QStringLiteral("tiny/Kimi-Linear-Flow");
        QDirIterator files(source, QDir::Files, QDirIterator::Subdirectories);
        while (files.hasNext()) {
            const QString path = files.next();
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString name = QDir(source).relativeFilePath(path);
            hub.addFile(repo, name, f.readAll(), name.endsWith(QLatin1String(".safetensors")));
        }
        qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());

        auto services = StudioApplication::createServices();
        // A models folder that does not exist yet: the app makes it.
        const QString models = m_tmp.filePath(QStringLiteral("not-yet/models"));
        services->settings->setModelsFolder(models);
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->setProperty("currentPage", 0);
        QTRY_VERIFY(QDir(models).exists());

        // 1. The repository typed on the Models page.
        auto *field = item(window, "repoField");
        QVERIFY(field);
        field->setProperty("text", repo);
        shot(window, QStringLiteral("1-repository"));

        // 2. Download, and wait for every file to be verified.
        QSignalSpy finished(services->downloads.get(), &DownloadManager::finished);
        click(window, item(window, "startButton"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        const QString download = services->downloads->destination();
        QVERIFY(download.startsWith(models));
        auto *convertButton = item(window, "convertButton");
        QTRY_VERIFY(convertButton->isVisible());
        shot(window, QStringLiteral("2-downloaded"));

        // 3. Convert: the Convert page, filled in for that download and checked.
        click(window, convertButton);
        const QStringList pages = window->property("pageNames").toStringList();
        QCOMPARE(pages.at(window->property("currentPage").toInt()), QStringLiteral("Convert"));
        auto *convertPage = item(window, "convertPage");
        auto *job = convertPage->findChild<ConversionJob *>(QStringLiteral("conversionJob"));
        QVERIFY(job);
        QCOMPARE(item(window, "convertSource")->property("text").toString(), download);
        QCOMPARE(item(window, "convertOutput")->property("text").toString(), download + QStringLiteral(".waste"));
        QTRY_COMPARE_WITH_TIMEOUT(job->state(), ConversionJob::Ready, 60000);
        QVERIFY(job->planned() && job->enoughSpace());
        // The Models page's container figure is the Convert page's one.
        QCOMPARE(services->downloads->containerBytesNeeded(), job->outputBytes());
        QVERIFY(services->downloads->containerPlanned());
        shot(window, QStringLiteral("3-convert-ready"));

        // 4. Start: the progress is at the top of the page, where the eye is.
        QSignalSpy converted(job, &ConversionJob::finished);
        auto *start = item(window, "convertStart");
        QTRY_VERIFY(start->isEnabled());
        click(window, start);
        QCOMPARE(job->state(), ConversionJob::Running);
        auto *card = item(window, "convertRunCard");
        QVERIFY(card);
        QTRY_VERIFY(card->isVisible());
        QVERIFY(card->mapToScene(QPointF(0, card->height())).y() < window->height() / 2.0);
        QVERIFY(item(window, "convertProgress")->isVisible());
        shot(window, QStringLiteral("4-converting"));

        // 5. Done: no stale "interrupted" notice, Start is not "Resume", and the library
        // lists the container by itself.
        QTRY_VERIFY_WITH_TIMEOUT(converted.count() == 1, 240000);
        QVERIFY2(converted.first().at(0).toBool(), qPrintable(job->errorText()));
        QVERIFY(!job->canResume());
        QCOMPARE(start->property("text").toString(), QStringLiteral("Start"));
        for (QQuickItem *label : WindowTest::allItems(convertPage))
            if (label->isVisible() && label->property("text").toString().contains(QLatin1String("interrupted")))
                QFAIL("the interrupted-conversion notice is still shown");
        QVERIFY(item(window, "convertStatus")->property("text").toString().startsWith(QLatin1String("Done")));
        auto *library = item(window, "modelsPage")->findChild<ModelLibrary *>();
        QVERIFY(library);
        const QString container = download + QStringLiteral(".waste");
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (int r = 0; r < library->rowCount(); ++r)
                    if (library->data(library->index(r), ModelLibrary::PathRole).toString() == container)
                        return library->data(library->index(r), ModelLibrary::KindRole).toString() == QLatin1String("container");
                return false;
            }(),
            5000);
        shot(window, QStringLiteral("5-converted"));

        // 6. Open in chat: the model opens, the chat page comes forward, and it answers.
        click(window, item(window, "convertOpenInChat"));
        QCOMPARE(pages.at(window->property("currentPage").toInt()), QStringLiteral("Chat"));
        QTRY_COMPARE_WITH_TIMEOUT(services->engine->state(), EngineController::Ready, 30000);
        QCOMPARE(services->engine->modelPath(), container);
        ChatController *chat = services->chat.get();
        chat->setMaxTokens(12);
        auto *composer = item(window, "composer");
        QTRY_VERIFY(composer->hasActiveFocus() || (composer->forceActiveFocus(), composer->hasActiveFocus()));
        QSignalSpy saved(chat, &ChatController::answerSaved);
        WindowTest::typeText(window, QStringLiteral("Hello"));
        QTest::keyClick(window, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 60000);
        QVERIFY(chat->messages()->index(1).data(MessageModel::ErrorRole).toString().isEmpty());
        shot(window, QStringLiteral("6-chat"));

        // The library marks the model that is open.
        window->setProperty("currentPage", 0);
        QTRY_VERIFY([&] {
            for (int r = 0; r < library->rowCount(); ++r)
                if (library->data(library->index(r), ModelLibrary::IsOpenRole).toBool())
                    return library->data(library->index(r), ModelLibrary::PathRole).toString() == container;
            return false;
        }());
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
        services->downloads->cancel();
        qunsetenv("HF_ENDPOINT");
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestFlow t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_flow.moc"
