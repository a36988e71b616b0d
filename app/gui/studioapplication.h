// Builds the app: Qt application object, style, the services (engine, settings, ...), the
// QML engine with Main.qml, and the first-run demo model. Tests reuse createServices().
#pragma once

#include "server/apiserver.h"

#include <QObject>
#include <memory>

class QQmlApplicationEngine;
class EngineController;
class AppSettings;
class ChatController;
class PlannerController;
class DemoModel;
class DownloadManager;
class McpHub;

struct StudioServices {
    std::unique_ptr<AppSettings> settings;
    std::unique_ptr<EngineController> engine;
    std::unique_ptr<ApiServer> server; // declared after engine: destroyed before it
    std::unique_ptr<McpHub> mcp;       // the chat's MCP servers; outlives the chat
    std::unique_ptr<ChatController> chat;
    std::unique_ptr<PlannerController> planner;
    std::unique_ptr<DemoModel> demo;
    std::unique_ptr<DownloadManager> downloads;
    StudioServices();
    ~StudioServices(); // chat and planner go first: they hold on to the engine
};

class StudioApplication {
public:
    static int run(int argc, char **argv);
    // Application name/organisation and the Quick Controls style: call before any service.
    static void configure();
    static std::unique_ptr<StudioServices> createServices();
    // Loads Main.qml; returns false (with the errors on stderr) if it failed.
    static bool loadMainWindow(QQmlApplicationEngine &engine);
    // Opens the last model, or on first run writes and opens the demo model.
    static void openStartupModel(StudioServices &services);
};
