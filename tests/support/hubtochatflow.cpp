#include "hubtochatflow.h"

#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "convert/conversionjob.h"
#include "download/downloadmanager.h"
#include "library/modellibrary.h"
#include "engine/enginecontroller.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
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

QString currentPage(QQuickWindow *window)
{
    return window->property("pageNames").toStringList().value(window->property("currentPage").toInt());
}

} // namespace

HubToChatFlow::HubToChatFlow(QString prefix) : m_prefix(std::move(prefix))
{
    if (m_hub.start())
        qputenv("HF_ENDPOINT", m_hub.endpoint().toUtf8());
}

HubToChatFlow::~HubToChatFlow()
{
    if (m_services)
        m_services->downloads->cancel();
    m_qml.reset();
    m_services.reset();
    qunsetenv("HF_ENDPOINT");
}

void HubToChatFlow::publish(const QString &repo, const QString &folder)
{
    QVERIFY2(!m_hub.endpoint().isEmpty(), "the loopback hub did not start");
    QDirIterator files(folder, QDir::Files, QDirIterator::Subdirectories);
    int n = 0;
    while (files.hasNext()) {
        const QString path = files.next();
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
        const QString name = QDir(folder).relativeFilePath(path);
        m_hub.addFile(repo, name, f.readAll(), name.endsWith(QLatin1String(".safetensors")));
        ++n;
    }
    QVERIFY2(n > 0, qPrintable(folder));
}

void HubToChatFlow::showWindow(const QString &modelsFolder)
{
    m_models = modelsFolder;
    m_services = StudioApplication::createServices();
    m_services->settings->setModelsFolder(modelsFolder);
    m_qml = std::make_unique<QQmlApplicationEngine>();
    m_window = WindowTest::showMainWindow(*m_qml);
    QVERIFY(m_window);
    m_window->setProperty("currentPage", 0);
    QTRY_VERIFY(QDir(modelsFolder).exists());
}

void HubToChatFlow::download(const QString &repo)
{
    auto *field = item(m_window, "repoField");
    QVERIFY(field);
    field->setProperty("text", repo);
    shot(QStringLiteral("1-repository"));
    if (QTest::currentTestFailed())
        return;

    QSignalSpy finished(m_services->downloads.get(), &DownloadManager::finished);
    click(m_window, item(m_window, "startButton"));
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    m_download = m_services->downloads->destination();
    QVERIFY(m_download.startsWith(m_models));
    auto *convertButton = item(m_window, "convertButton");
    QVERIFY(convertButton);
    QTRY_VERIFY(convertButton->isVisible());
    shot(QStringLiteral("2-downloaded"));
}

void HubToChatFlow::convert(const QString &expectExperts)
{
    // The Convert page, filled in for that download and checked.
    click(m_window, item(m_window, "convertButton"));
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(currentPage(m_window), QStringLiteral("Convert"));
    auto *convertPage = item(m_window, "convertPage");
    auto *job = convertPage->findChild<ConversionJob *>(QStringLiteral("conversionJob"));
    QVERIFY(job);
    QCOMPARE(item(m_window, "convertSource")->property("text").toString(), m_download);
    QCOMPARE(item(m_window, "convertOutput")->property("text").toString(), m_download + QStringLiteral(".waste"));
    QTRY_COMPARE_WITH_TIMEOUT(job->state(), ConversionJob::Ready, 60000);
    QVERIFY(job->planned() && job->enoughSpace());
    if (!expectExperts.isEmpty())
        QCOMPARE(job->chosenExperts(), expectExperts);
    // The Models page's container figure is the Convert page's one.
    QCOMPARE(m_services->downloads->containerBytesNeeded(), job->outputBytes());
    QVERIFY(m_services->downloads->containerPlanned());
    shot(QStringLiteral("3-convert-ready"));

    // Start: the progress is at the top of the page, where the eye is.
    QSignalSpy converted(job, &ConversionJob::finished);
    auto *start = item(m_window, "convertStart");
    QTRY_VERIFY(start->isEnabled());
    click(m_window, start);
    if (QTest::currentTestFailed())
        return;
    auto *card = item(m_window, "convertRunCard");
    QVERIFY(card);
    // A tiny model may be done before the card is looked at: the card shows either way.
    QTRY_VERIFY(card->isVisible());
    QVERIFY(card->mapToScene(QPointF(0, card->height())).y() < m_window->height() / 2.0);
    QVERIFY(item(m_window, "convertProgress")->isVisible());
    shot(QStringLiteral("4-converting"));

    // Done: no stale "interrupted" notice, Start is not "Resume", and the library lists the
    // container by itself.
    QTRY_VERIFY_WITH_TIMEOUT(converted.count() == 1, 240000);
    QVERIFY2(converted.first().at(0).toBool(), qPrintable(job->errorText()));
    QVERIFY(!job->canResume());
    QCOMPARE(start->property("text").toString(), QStringLiteral("Start"));
    for (QQuickItem *label : WindowTest::allItems(convertPage))
        if (label->isVisible() && label->property("text").toString().contains(QLatin1String("interrupted")))
            QFAIL("the interrupted-conversion notice is still shown");
    QVERIFY(item(m_window, "convertStatus")->property("text").toString().startsWith(QLatin1String("Done")));
    auto *library = item(m_window, "modelsPage")->findChild<ModelLibrary *>();
    QVERIFY(library);
    m_container = m_download + QStringLiteral(".waste");
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (int r = 0; r < library->rowCount(); ++r)
                if (library->data(library->index(r), ModelLibrary::PathRole).toString() == m_container)
                    return library->data(library->index(r), ModelLibrary::KindRole).toString() == QLatin1String("container");
            return false;
        }(),
        5000);
    shot(QStringLiteral("5-converted"));
}

void HubToChatFlow::openInChat()
{
    click(m_window, item(m_window, "convertOpenInChat"));
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(currentPage(m_window), QStringLiteral("Chat"));
    QTRY_COMPARE_WITH_TIMEOUT(m_services->engine->state(), EngineController::Ready, 30000);
    QCOMPARE(m_services->engine->modelPath(), m_container);
}

void HubToChatFlow::send(const QString &text, int maxTokens)
{
    ChatController *chat = m_services->chat.get();
    chat->setMaxTokens(maxTokens);
    auto *composer = item(m_window, "composer");
    QVERIFY(composer);
    QTRY_VERIFY(composer->hasActiveFocus() || (composer->forceActiveFocus(), composer->hasActiveFocus()));
    QSignalSpy saved(chat, &ChatController::answerSaved);
    WindowTest::typeText(m_window, text);
    QTest::keyClick(m_window, Qt::Key_Return);
    QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 60000);
    const int last = chat->messages()->rowCount() - 1;
    QVERIFY(last >= 1);
    QVERIFY2(chat->messages()->index(last).data(MessageModel::ErrorRole).toString().isEmpty(),
             qPrintable(chat->messages()->index(last).data(MessageModel::ErrorRole).toString()));
}

void HubToChatFlow::checkLibraryMarksOpenModel()
{
    m_window->setProperty("currentPage", 0);
    auto *library = item(m_window, "modelsPage")->findChild<ModelLibrary *>();
    QVERIFY(library);
    QTRY_VERIFY([&] {
        for (int r = 0; r < library->rowCount(); ++r)
            if (library->data(library->index(r), ModelLibrary::IsOpenRole).toBool())
                return library->data(library->index(r), ModelLibrary::PathRole).toString() == m_container;
        return false;
    }());
}

void HubToChatFlow::shot(const QString &step)
{
    QTest::qWait(150);
    QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
    const QString file = QStringLiteral(WASTE_SCREENSHOT_DIR "/%1-%2.png").arg(m_prefix, step);
    QVERIFY2(m_window->grabWindow().save(file), qPrintable(file));
}
