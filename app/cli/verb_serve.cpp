// `waste serve MODEL`: the OpenAI-compatible API server without the GUI. The socket opens
// at once (GET /health answers 503 while the model loads, 200 when it is ready); the first
// line on stdout is a JSON object with the URL and the port actually bound (--port 0 picks
// a free one). SIGINT/SIGTERM stop it cleanly. Each answer is kept among the model's real
// runs on this machine (planner/answerrecorder.h), which `waste plan` and the app's Planner
// correct their forecasts by.
#include "observed_runs.h"
#include "verb.h"

#include "server/apiserver.h"
#include "engine/enginecontroller.h"
#include "planner/answerrecorder.h"
#include "planner/observedspeeds.h"

#include <waste/waste.hpp>

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QStandardPaths>

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace {

int g_signalPipe[2] = {-1, -1};

void onSignal(int)
{
    const char c = 1;
    [[maybe_unused]] const auto n = ::write(g_signalPipe[0], &c, 1);
}

int runServe(const cli::Args &args)
{
    const QString model = QString::fromStdString(args.positional(0));
    if (!QFileInfo::exists(model))
        throw std::runtime_error("no model at " + model.toStdString() + " (give a converted container folder)");
    const qint64 budget = args.value("--budget") ? waste::parseSize(*args.value("--budget")) : 0;
    const long long ctx = args.integer("--ctx", 4096);
    if (ctx < 16 || ctx > (1 << 22))
        throw cli::UsageError("--ctx must be between 16 and 4194304");
    const long long port = args.integer("--port", 8080);
    if (port < 0 || port > 65535)
        throw cli::UsageError("--port must be between 0 and 65535");
    const long long maxTokens = args.integer("--max-tokens", 4096);
    if (maxTokens < 1)
        throw cli::UsageError("--max-tokens must be at least 1");

    // The prompt cache on disk (engine/promptcache.h): a system prompt and tools sent again,
    // by any client, after a restart too, are not read again.
    const qint64 cacheBytes = waste::parseSize(args.text("--prompt-cache-size", "4G"));
    QString cacheDir = QString::fromStdString(args.text("--prompt-cache", ""));
    if (cacheDir.isEmpty())
        cacheDir = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) + QStringLiteral("/waste/prompt-cache");

    EngineController engine(nullptr);
    engine.setPromptCache(cacheDir, cacheBytes);
    ApiServer server(&engine, nullptr);
    recordAnswers(&engine, std::make_shared<ObservedSpeeds>(QString::fromStdString(cli::observedSpeedsFile())));
    server.setHost(QString::fromStdString(args.text("--host", "127.0.0.1")));
    server.setPort(int(port));
    QString key = QString::fromStdString(args.text("--api-key", ""));
    if (key.isEmpty())
        key = qEnvironmentVariable("WASTE_API_KEY");
    server.setApiKey(key);
    QStringList origins;
    for (const std::string &o : args.values("--cors"))
        origins << QString::fromStdString(o);
    server.setCorsOrigins(origins);
    server.setAllowLocalImages(args.flag("--allow-local-images"));
    server.setModelId(QString::fromStdString(args.text("--model-id", "")));
    server.setDefaultMaxTokens(int(maxTokens));
    if (!server.start())
        throw std::runtime_error(server.errorString().toStdString());

    const QJsonObject hello{{QStringLiteral("url"), server.url()},
                            {QStringLiteral("host"), server.host()},
                            {QStringLiteral("port"), server.boundPort()}};
    std::printf("%s\n", QJsonDocument(hello).toJson(QJsonDocument::Compact).constData());
    std::fflush(stdout);
    std::fprintf(stderr, "waste serve: listening on %s (loading %s…)\n", qPrintable(server.url()), qPrintable(model));

    QObject::connect(&engine, &EngineController::modelOpenFailed, [](const QString &, const QString &message) {
        std::fprintf(stderr, "waste serve: %s\n", qPrintable(message));
        QCoreApplication::exit(1);
    });
    QObject::connect(&engine, &EngineController::modelChanged, [&engine, &server] {
        if (engine.state() == EngineController::Ready)
            std::fprintf(stderr, "waste serve: %s ready; model id \"%s\"\n", qPrintable(engine.modelName()),
                         qPrintable(server.modelId()));
    });

    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, g_signalPipe) != 0)
        throw std::runtime_error("cannot create the signal pipe");
    QSocketNotifier notifier(g_signalPipe[1], QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, [] {
        char c;
        [[maybe_unused]] const auto n = ::read(g_signalPipe[1], &c, 1);
        std::fprintf(stderr, "waste serve: stopping\n");
        QCoreApplication::quit();
    });
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);

    engine.openModel(model, budget, int(ctx));
    const int status = QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    server.stop();
    ::close(g_signalPipe[0]);
    ::close(g_signalPipe[1]);
    return status;
}

} // namespace

WASTE_CLI_VERB({"serve",
                "MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--budget SIZE] [--cors ORIGIN]…",
                "OpenAI-compatible API server (chat/completions, completions, models, health)",
                {{{"--host", cli::OptionKind::Value, "ADDR  address to listen on (127.0.0.1; others need --api-key)"},
                  {"--port", cli::OptionKind::Value, "N     TCP port (8080; 0 picks a free one)"},
                  {"--api-key", cli::OptionKind::Value, "KEY   require \"Authorization: Bearer KEY\" (or $WASTE_API_KEY)"},
                  {"--budget", cli::OptionKind::Value, "SIZE  RAM ceiling (8G, 512M, bytes; default: the planner's)"},
                  {"--ctx", cli::OptionKind::Value, "N     context length in tokens (4096)"},
                  {"--cors", cli::OptionKind::Repeated, "ORIGIN  allow browser pages from ORIGIN (\"*\": any)"},
                  {"--allow-local-images", cli::OptionKind::Flag, "accept image_url values that are local file paths"},
                  {"--model-id", cli::OptionKind::Value, "ID    the model name clients see (default: the folder name)"},
                  {"--max-tokens", cli::OptionKind::Value, "N     max_tokens when a request gives none (4096)"},
                  {"--prompt-cache", cli::OptionKind::Value, "DIR   where states of reused prompt prefixes are kept (~/.cache/waste/prompt-cache)"},
                  {"--prompt-cache-size", cli::OptionKind::Value, "SIZE  the most the prompt cache keeps (4G; 0: off)"}},
                 1, 1},
                &runServe});
