// waste cache-sim TRACE.jsonl (--slots N | --ws X) [--policy NAME] [--json]
// Replays recorded routing through the engine's real expert cache and compares it with
// Belady's optimum on the same trace and slot count.
#include "verb.h"

#include <waste/cache_sim.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace {

int runCacheSim(const cli::Args &args)
{
    const bool hasSlots = args.value("--slots").has_value(), hasWs = args.value("--ws").has_value();
    if (hasSlots == hasWs)
        throw cli::UsageError("give exactly one of --slots N or --ws X");
    const waste::CacheSimulator sim(args.positional(0));
    long long slots;
    if (hasSlots) {
        slots = args.integer("--slots", 0);
    } else {
        const double ws = args.number("--ws", 0);
        if (!(ws > 0))
            throw cli::UsageError("--ws must be a positive number of working sets");
        slots = std::llround(ws * double(sim.workingSet()));
    }
    if (slots < 1 || slots > (1ll << 30))
        throw cli::UsageError("--slots must be between 1 and 2^30 (got " + std::to_string(slots) + ")");
    const waste::CacheSimResult r = sim.run(int(slots), args.text("--policy", "default"));
    if (args.flag("--json")) {
        nlohmann::ordered_json j;
        j["accesses"] = r.accesses;
        j["hits"] = r.hits;
        j["hit_rate"] = r.hitRate;
        j["opt_hit_rate"] = r.optHitRate;
        j["policy"] = r.policy;
        j["slots"] = r.slots;
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("%s: %zu tokens, %d MoE layers, %d experts, top-%d (working set %lld records)\n",
                    args.positional(0).c_str(), static_cast<size_t>(sim.tokens()), sim.layers(), sim.experts(), sim.topK(),
                    (long long)sim.workingSet());
        std::printf("%s with %d slots (%.2f working sets): %lld of %lld demand accesses hit = %.1f%%\n",
                    r.policy.c_str(), r.slots, double(r.slots) / double(sim.workingSet()), (long long)r.hits,
                    (long long)r.accesses, 100 * r.hitRate);
        std::printf("Belady optimum: %.1f%%  (policy reaches %.1f%% of it)\n", 100 * r.optHitRate,
                    r.optHitRate > 0 ? 100 * r.hitRate / r.optHitRate : 100.0);
    }
    return 0;
}

} // namespace

WASTE_CLI_VERB({"cache-sim", "TRACE.jsonl (--slots N | --ws X) [--policy NAME] [--json]",
                "replay recorded expert routing through the cache and compare with Belady's optimum",
                {{{"--slots", cli::OptionKind::Value, "N  cache slots (one expert record each)"},
                  {"--ws", cli::OptionKind::Value, "X  cache size in per-token working sets (top-k x MoE layers)"},
                  {"--policy", cli::OptionKind::Value, "NAME  reuse (default), layerfreq, lru or lfru (the reference's)"},
                  {"--json", cli::OptionKind::Flag, "one JSON object on stdout"}},
                 1, 1},
                &runCacheSim});
