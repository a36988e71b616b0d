#include "cache/cache_sim.hpp"

#include "cache/belady.hpp"
#include "cache/expert_cache.hpp"

#include <waste/waste.hpp>

namespace waste::cache {

CacheSimResult cacheSim(const RoutingTrace &trace, int slots, PolicyKind policy, bool withOptimum)
{
    if (slots < 1)
        throw Error(ErrorCode::Argument, "cache-sim: need at least one slot (got " + std::to_string(slots) + ")");
    CacheConfig cfg;
    cfg.slots = slots;
    cfg.recordBytes = 0;
    cfg.layers = trace.layers;
    cfg.experts = trace.experts;
    cfg.policy = policy;
    cfg.allocate = false;
    ExpertCache cache(cfg);

    for (const auto &tok : trace.tokens) {
        cache.beginToken();
        for (size_t l = 0; l < tok.size(); ++l) {
            cache.beginLayer(int(l), tok[l]); // the router's choice is known as a whole, as in the engine
            for (int e : tok[l]) {
                auto ref = cache.acquire(int(l), e);
                if (ref.mustRead)
                    cache.filled(ref.slot, true, 0);
                cache.release(ref.slot);
            }
        }
    }
    CacheStats st = cache.stats();
    CacheSimResult r;
    r.accesses = st.demandHits + st.demandMisses;
    r.hits = st.demandHits;
    r.hitRate = r.accesses ? double(r.hits) / double(r.accesses) : 0.0;
    if (withOptimum && r.accesses)
        r.optHitRate = double(beladyHits(trace, slots)) / double(r.accesses);
    r.policy = policyName(policy);
    r.slots = slots;
    return r;
}

} // namespace waste::cache
