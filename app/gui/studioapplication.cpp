#include "studioapplication.h"
#include "settings/datafolder.h"

#include "download/downloadmanager.h"
#include "engine/enginecontroller.h"
#include "engine/generationhandle.h"
#include "server/apiserver.h"
#include "settings/appsettings.h"
#include "chat/chatcontroller.h"
#include "mcp/mcphub.h"
#include "remote/remoteendpoint.h"
#include "remote/remotestore.h"
#include "demo/demomodel.h"
#include "planner/answerrecorder.h"
#include "planner/engineplansource.h"
#include "planner/observedspeeds.h"
#include "planner/plannercontroller.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QPointer>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QTimer>

#include <cstdio>
#include <QtQml/QQmlExtensionPlugin>

Q_IMPORT_QML_PLUGIN(WasteStudioPlugin)
Q_IMPORT_QML_PLUGIN(WasteStudio_CorePlugin)

void StudioApplication::configure()
{
    QCoreApplication::setApplicationName(QString::fromLatin1(kStudioName));
    QCoreApplication::setOrganizationName(QString::fromLatin1(kStudioName));
    QCoreApplication::setOrganizationDomain(QStringLiteral("waste.studio"));
    QGuiApplication::setDesktopFileName(QStringLiteral("studio.waste.WasteStudio"));
    // Basic renders identically offscreen (software scenegraph) and on a GPU; our Theme
    // singleton styles it.
    if (qEnvironmentVariableIsEmpty("QT_QUICK_CONTROLS_STYLE"))
        QQuickStyle::setStyle(QStringLiteral("Basic"));
}

StudioServices::StudioServices() = default;

StudioServices::~StudioServices()
{
    downloads.reset();
    demo.reset();
    planner.reset();
    chat.reset();
    mcp.reset();
    server.reset();
    engine.reset();
    settings.reset();
}

std::unique_ptr<StudioServices> StudioApplication::createServices()
{
    auto s = std::make_unique<StudioServices>();
    s->settings = std::make_unique<AppSettings>(nullptr);
    s->engine = std::make_unique<EngineController>(nullptr);
    s->engine->setPromptCache(s->settings->promptCacheFolder(), qint64(s->settings->promptCacheGiB()) << 30);
    QObject::connect(s->settings.get(), &AppSettings::changed, s->engine.get(),
                     [e = s->engine.get(), st = s->settings.get()] {
                         e->setPromptCache(st->promptCacheFolder(), qint64(st->promptCacheGiB()) << 30);
                     });
    s->server = std::make_unique<ApiServer>(s->engine.get(), nullptr);
    s->server->persistSettings();
    s->mcp = std::make_unique<McpHub>(nullptr);
    s->chat = std::make_unique<ChatController>(
        s->engine.get(), s->settings->dataFolder() + QStringLiteral("/conversations.sqlite"), nullptr);
    s->chat->setToolHub(s->mcp.get());
    s->planner = std::make_unique<PlannerController>(std::make_shared<EnginePlanSource>(), nullptr);
    // Every answer's measured speeds correct the Planner's forecast for that model.
    auto observed = std::make_shared<ObservedSpeeds>(s->settings->dataFolder() + QStringLiteral("/observed-speeds.json"));
    s->planner->setObservedSpeeds(observed);
    recordAnswers(s->engine.get(), observed, [p = QPointer<PlannerController>(s->planner.get())](const QString &model) {
        if (p && QFileInfo(p->container()).absoluteFilePath() == QFileInfo(model).absoluteFilePath())
            p->refresh();
    });
    // The planner follows the open model (or the last one when none is open yet).
    QObject::connect(s->engine.get(), &EngineController::modelChanged, s->planner.get(),
                     [e = s->engine.get(), p = s->planner.get()] {
                         if (!e->modelPath().isEmpty() && !e->isRemote()) // a remote engine has no plan here
                             p->setContainer(e->modelPath());
                     });
    // The chat warns before a prompt that takes over a minute to read, at the rate the
    // Planner predicts for the open model at its budget.
    const auto readRate = [c = s->chat.get(), p = s->planner.get(), e = s->engine.get()] {
        c->setReadRate(e->isRemote() ? 0 : p->prefillTokensPerSecond());
    };
    QObject::connect(s->planner.get(), &PlannerController::planChanged, s->chat.get(), readRate);
    QObject::connect(s->planner.get(), &PlannerController::budgetChanged, s->chat.get(), readRate);
    if (!s->settings->lastModelPath().isEmpty() && !remoteendpoint::isRemotePath(s->settings->lastModelPath()))
        s->planner->setContainer(s->settings->lastModelPath());
    s->demo = std::make_unique<DemoModel>(s->engine.get(), s->settings.get(), nullptr);
    // A real model that opened is the one to reopen next time, a remote engine too; the demo
    // never is.
    QObject::connect(s->engine.get(), &EngineController::modelChanged, s->settings.get(),
                     [e = s->engine.get(), st = s->settings.get(), d = s->demo.get()] {
                         if (e->state() == EngineController::Ready && !e->modelPath().isEmpty() && !d->active()) {
                             st->setLastModelPath(e->modelPath());
                             if (!e->isRemote())
                                 st->rememberOpened(e->modelPath());
                         }
                     });
    // The download queue in the data folder; a download that was running when the app quit
    // (or crashed) resumes by itself.
    s->downloads = std::make_unique<DownloadManager>(nullptr);
    return s;
}

bool StudioApplication::loadMainWindow(QQmlApplicationEngine &engine)
{
    // The views sit in one folder per feature, so they find each other through the module's
    // qmldir, which Qt 6.4 does not look for under the resource prefix by itself (6.5 does).
    engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
    engine.load(QUrl(QStringLiteral("qrc:/qt/qml/WasteStudio/common/Main.qml")));
    return !engine.rootObjects().isEmpty();
}

int StudioApplication::run(int argc, char **argv)
{
    // QApplication (not QGuiApplication): Qt Charts draws through QGraphicsScene.
    QApplication app(argc, argv);
    configure();
    app.setWindowIcon(QIcon(QStringLiteral(":/qt/qml/WasteStudio/icons/waste-studio.svg")));

    auto services = createServices();
    QQmlApplicationEngine engine;
    if (!loadMainWindow(engine))
        return 1;
    // --self-test: start, show the window, quit. Used to check an installed package starts.
    if (app.arguments().contains(QStringLiteral("--self-test"))) {
        QTimer::singleShot(500, &app, [] {
            std::fprintf(stdout, "waste-studio: started\n");
            QCoreApplication::exit(0);
        });
        return app.exec();
    }

    openStartupModel(*services);
    return app.exec();
}

void StudioApplication::openStartupModel(StudioServices &services)
{
    const QString last = services.settings->lastModelPath();
    // A remote engine still in the library is opened again; one that is down says so on the
    // Models page, as any failed open does.
    const bool lastExists = remoteendpoint::isRemotePath(last)
                                ? remotestore::find(remoteendpoint::idOf(last)).isValid()
                                : !last.isEmpty() && QDir(last).exists();
    if (lastExists)
        services.engine->openModel(last, services.settings->budgetFor(last), services.settings->contextTokens());
    else if (services.demo->needed())
        services.demo->openDemo();
}
