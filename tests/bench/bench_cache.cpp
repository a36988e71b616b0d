// Cache hit rate against Belady's optimum at 0.5, 1, 2 and 3 working sets.
// Usage: bench_cache [TRACE.jsonl]   (default: the OLMoE fixture trace)
#include "cache/cache_sim.hpp"

#include <cstdio>
#include <string>

using namespace waste::cache;

int main(int argc, char **argv)
{
    std::string path = argc > 1 ? argv[1] : std::string(WASTE_FIXTURES_DIR) + "/traces/olmoe_299.jsonl";
    RoutingTrace trace = loadRoutingTrace(path);
    std::printf("trace %s: %zu tokens, %d layers, %d experts, top-%d, working set %lld records\n", path.c_str(),
                trace.tokens.size(), trace.layers, trace.experts, trace.topK, (long long)trace.workingSet());
    std::printf("%6s %6s %8s %8s %8s %8s %12s\n", "ws", "slots", "optimum", "layerfreq", "lfru", "lru", "layerfreq/opt");
    double worst = 1e9;
    for (double ws : {0.5, 1.0, 2.0, 3.0}) {
        int slots = int(ws * double(trace.workingSet()));
        auto ours = cacheSim(trace, slots, PolicyKind::LayerFreq);
        auto lfru = cacheSim(trace, slots, PolicyKind::SampledLfru, false);
        auto lru = cacheSim(trace, slots, PolicyKind::Lru, false);
        double ratio = ours.optHitRate > 0 ? ours.hitRate / ours.optHitRate : 0;
        if (ws >= 1.0 && ratio < worst)
            worst = ratio;
        std::printf("%6.1f %6d %7.1f%% %8.1f%% %7.1f%% %7.1f%% %11.1f%%\n", ws, slots, 100 * ours.optHitRate,
                    100 * ours.hitRate, 100 * lfru.hitRate, 100 * lru.hitRate, 100 * ratio);
    }
    std::printf("layerfreq worst share of Belady at 1-3 working sets: %.1f%%\n", 100 * worst);
    return 0;
}
