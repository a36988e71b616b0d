// withEnvironment: the one place that maps the WASTE_* environment variables onto
// OpenOptions. The library never calls it itself; programs that let the environment tune
// the engine (the CLI, the app) do, before Model::open.
#include <waste/waste.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace waste {
namespace {

const char *setting(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v ? v : nullptr;
}

} // namespace

OpenOptions withEnvironment(OpenOptions options)
{
    if (options.threads <= 0)
        if (const char *v = setting("WASTE_THREADS"))
            options.threads = std::atoi(v);
    if (const char *v = std::getenv("WASTE_DIRECT"); v && std::string(v) == "0")
        options.directIo = false;
    if (const char *v = std::getenv("WASTE_IO_THREADS"))
        options.ioThreads = std::clamp(std::atoi(v), 0, 64);
    if (const char *v = std::getenv("WASTE_IO_RING"); v && std::string(v) == "0")
        options.ioRing = false;
    if (const char *v = setting("WASTE_LOOKAHEAD"))
        options.lookaheadExperts = std::atoi(v);
    if (const char *v = std::getenv("WASTE_CACHE_POLICY"))
        options.cachePolicy = v;
    if (const char *v = setting("WASTE_TRAINED_ROUNDING"))
        options.trainedRounding = std::string(v) != "0";
    if (const char *v = setting("WASTE_LOAD_EVERY_EXPERT"))
        options.loadEveryExpert = std::string(v) != "0";
    return options;
}

} // namespace waste
