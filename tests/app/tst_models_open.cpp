// Opening models from the Models page: the models folder is made when it is missing; a
// container anywhere on disk opens through the "Open a container…" folder picker (clicked
// and chosen as a person does); the demo stays listed once another model is open, beside
// that model; the library marks the open one; and the status bar forgets the previous
// model's tok/s when the model changes.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "demo/demomodel.h"
#include "library/modellibrary.h"
#include "engine/enginecontroller.h"
#include "filepicker.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QListView>
#include <QPushButton>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kFixtures = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container");

int rowOfPath(ModelLibrary *library, const QString &path)
{
    for (int r = 0; r < library->rowCount(); ++r)
        if (QDir::cleanPath(library->data(library->index(r), ModelLibrary::PathRole).toString()) == QDir::cleanPath(path))
            return r;
    return -1;
}

} // namespace

class TestModelsOpen : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("models-open test"));
        WindowTest::collectWarnings();
    }

    void openAContainerFromAnywhereBesideTheDemo()
    {
        auto services = StudioApplication::createServices();
        const QString models = m_tmp.filePath(QStringLiteral("fresh/models"));
        services->settings->setModelsFolder(models);
        QVERIFY(!QDir(models).exists());
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->setProperty("currentPage", 0);
        QTRY_VERIFY(QDir(models).exists()); // made, not left for the person to make

        // First run: the demo opens and answers, so the status bar has a speed.
        EngineController *engine = services->engine.get();
        services->demo->openDemo();
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 120000);
        QVERIFY(services->demo->active());
        ChatController *chat = services->chat.get();
        chat->setMaxTokens(8);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY(chat->send(QStringLiteral("Hello")));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
        QVERIFY(engine->lastTokensPerSecond() > 0);
        auto *speed = window->findChild<QQuickItem *>(QStringLiteral("statusSpeed"));
        QVERIFY(speed);
        QTRY_VERIFY(speed->isVisible());

        auto *library = window->findChild<QQuickItem *>(QStringLiteral("modelsPage"))->findChild<ModelLibrary *>();
        QVERIFY(library);
        QTRY_VERIFY(rowOfPath(library, services->demo->path()) >= 0);
        QTRY_VERIFY(library->data(library->index(rowOfPath(library, services->demo->path())), ModelLibrary::IsOpenRole).toBool());

        // "Open a container…": a folder picker; the person clicks the container's folder and Choose.
        auto *picker = window->findChild<FilePicker *>(QStringLiteral("openContainerPicker"));
        QVERIFY(picker);
        picker->setProperty("folder", kFixtures);
        auto *button = window->findChild<QQuickItem *>(QStringLiteral("openContainerButton"));
        QVERIFY(button && button->isVisible());
        // Scrolled into view first, as Tab or the wheel would.
        button->forceActiveFocus(Qt::TabFocusReason);
        QTest::qWait(50);
        const QPointF centre = button->mapToScene(QPointF(button->width() / 2, button->height() / 2));
        QVERIFY(centre.y() < window->height());
        QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
        QTRY_VERIFY(picker->isOpen());
        QFileDialog *dialog = picker->dialog();
        auto *list = dialog->findChild<QListView *>(QStringLiteral("listView"));
        QVERIFY(list);
        QModelIndex entry;
        QVERIFY(QTest::qWaitFor([&] {
            const QModelIndexList hits = list->model()->match(list->model()->index(0, 0, list->rootIndex()), Qt::DisplayRole,
                                                              QStringLiteral("r3.waste"), 1, Qt::MatchExactly);
            if (!hits.isEmpty())
                entry = hits.first();
            return entry.isValid();
        }, 10000));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::NoModifier, list->visualRect(entry).center());
        QPushButton *choose = dialog->findChild<QDialogButtonBox *>(QStringLiteral("buttonBox"))->button(QDialogButtonBox::Open);
        QVERIFY(choose && choose->isEnabled());
        QSignalSpy changed(engine, &EngineController::modelChanged);
        QTest::mouseClick(choose, Qt::LeftButton);
        QTRY_VERIFY(!picker->isOpen());
        QVERIFY(changed.wait(30000));
        QCOMPARE(engine->state(), EngineController::Ready);
        QCOMPARE(QDir::cleanPath(engine->modelPath()), QDir::cleanPath(kFixtures + QStringLiteral("/r3.waste")));

        // A new model: no speed until it has answered.
        QCOMPARE(engine->lastTokensPerSecond(), 0.0);
        QTRY_VERIFY(!speed->isVisible());

        // Both listed; the open one marked, the demo not.
        QTRY_VERIFY(rowOfPath(library, engine->modelPath()) >= 0 && rowOfPath(library, services->demo->path()) >= 0);
        QVERIFY(library->data(library->index(rowOfPath(library, engine->modelPath())), ModelLibrary::IsOpenRole).toBool());
        QVERIFY(!library->data(library->index(rowOfPath(library, services->demo->path())), ModelLibrary::IsOpenRole).toBool());
        int badges = 0;
        for (QQuickItem *b : WindowTest::itemsNamed(window->contentItem(), QStringLiteral("openBadge")))
            badges += b->isVisible();
        QCOMPARE(badges, 1);
        QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
        window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/models-library-open.png"));

        // Another container from outside the folder: the first stays listed (issue 39 item 4),
        // after a Refresh too, and both are remembered for the next start.
        const QString r3 = engine->modelPath();
        const QString k3 = QStringLiteral(WASTE_FIXTURES_DIR "/k3-container/k3s1.waste");
        engine->openModel(k3, 0, 2048);
        QTRY_VERIFY_WITH_TIMEOUT(engine->state() == EngineController::Ready
                                     && QDir::cleanPath(engine->modelPath()) == QDir::cleanPath(k3), 60000);
        QTRY_VERIFY(rowOfPath(library, engine->modelPath()) >= 0);
        QTRY_VERIFY(rowOfPath(library, r3) >= 0);
        library->refresh();
        QTest::qWait(300);
        QTRY_VERIFY(rowOfPath(library, r3) >= 0 && rowOfPath(library, engine->modelPath()) >= 0);
        const QStringList opened = services->settings->openedContainers();
        QVERIFY2(opened.size() >= 2 && QDir::cleanPath(opened.at(0)) == QDir::cleanPath(k3)
                     && QDir::cleanPath(opened.at(1)) == QDir::cleanPath(r3),
                 qPrintable(opened.join(QLatin1Char(','))));
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void theLibraryFollowsTheDisk()
    {
        const QString root = m_tmp.filePath(QStringLiteral("watched"));
        ModelLibrary library;
        library.setFolder(root);
        QVERIFY(QDir(root).exists());
        QTRY_VERIFY(!library.busy());
        QCOMPARE(library.rowCount(), 0);
        // A conversion writes its folder first and the manifest last.
        QVERIFY(QDir().mkpath(root + QStringLiteral("/new.waste")));
        QFile trunk(root + QStringLiteral("/new.waste/trunk.bin"));
        QVERIFY(trunk.open(QIODevice::WriteOnly));
        trunk.write(QByteArray(1000, 'x'));
        trunk.close();
        QTest::qWait(600);
        QCOMPARE(library.rowCount(), 0); // not a model yet
        QFile manifest(root + QStringLiteral("/new.waste/manifest.json"));
        QVERIFY(manifest.open(QIODevice::WriteOnly));
        manifest.write("{}");
        manifest.close();
        QTRY_COMPARE_WITH_TIMEOUT(library.rowCount(), 1, 5000); // no refresh() called
        QCOMPARE(library.data(library.index(0), ModelLibrary::KindRole).toString(), QStringLiteral("container"));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestModelsOpen t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_models_open.moc"
