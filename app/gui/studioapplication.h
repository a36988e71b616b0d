// Builds the app: Qt application object, style, the services (engine, settings, ...), the
// QML engine with Main.qml, and the first-run demo model. Tests reuse createServices().
#pragma once

#include "server/apiserver.h"

#include <QObject>
#include <memory>

class QQmlApplicationEngine;
class EngineController;
class AppSettings;

struct StudioServices {
    std::unique_ptr<AppSettings> settings;
    std::unique_ptr<EngineController> engine;
    std::unique_ptr<ApiServer> server; // declared after engine: destroyed before it
};

class StudioApplication {
public:
    static int run(int argc, char **argv);
    // Application name/organisation and the Quick Controls style: call before any service.
    static void configure();
    static std::unique_ptr<StudioServices> createServices();
    // Loads Main.qml; returns false (with the errors on stderr) if it failed.
    static bool loadMainWindow(QQmlApplicationEngine &engine);
};
