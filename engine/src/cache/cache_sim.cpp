#include "cache/cache_sim.hpp"

#include "cache/belady.hpp"
#include "cache/expert_cache.hpp"
#include "cache/warm_start.hpp"

#include <waste/waste.hpp>

#include <memory>

namespace waste::cache {

namespace {

std::unique_ptr<ExpertCache> simCache(const RoutingTrace &trace, int slots, PolicyKind policy)
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
    return std::make_unique<ExpertCache>(cfg);
}

void replay(ExpertCache &cache, const RoutingTrace &trace)
{
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
}

} // namespace

CacheSimResult cacheSim(const RoutingTrace &trace, int slots, PolicyKind policy, bool withOptimum,
                        const std::vector<UsageEntry> *warm)
{
    std::unique_ptr<ExpertCache> cache = simCache(trace, slots, policy);
    std::vector<std::pair<int, int>> preloaded;
    if (warm) {
        // The engine's room: two layers' worth kept free (StreamedExpertSource::warmFrom).
        const int64_t room = int64_t(slots) - 2 * int64_t(trace.topK);
        std::vector<UsageEntry> entries;
        for (const UsageEntry &u : *warm)
            if (u.layer >= 0 && u.layer < trace.layers && u.expert >= 0 && u.expert < trace.experts)
                entries.push_back(u); // recorded on another shape: left out, as the engine does
        warmStart(*cache, std::move(entries), room, [&](const UsageEntry &u, const ExpertCache::Ref &ref) {
            cache->filled(ref.slot, true, 0);
            preloaded.emplace_back(u.layer, u.expert);
        });
    }
    replay(*cache, trace);
    CacheStats st = cache->stats();
    CacheSimResult r;
    r.accesses = st.demandHits + st.demandMisses;
    r.hits = st.demandHits;
    r.hitRate = r.accesses ? double(r.hits) / double(r.accesses) : 0.0;
    if (withOptimum && r.accesses)
        r.optHitRate = double(beladyHits(trace, slots, preloaded)) / double(r.accesses);
    r.policy = policyName(policy);
    r.slots = slots;
    return r;
}

std::vector<UsageEntry> learnedUsage(const RoutingTrace &trace, int slots, PolicyKind policy)
{
    std::unique_ptr<ExpertCache> cache = simCache(trace, slots, policy);
    replay(*cache, trace);
    std::vector<std::vector<int64_t>> uses(size_t(trace.layers), std::vector<int64_t>(size_t(trace.experts), 0));
    std::vector<std::vector<int64_t>> lastPass = uses;
    int64_t pass = 0;
    for (const auto &tok : trace.tokens) {
        ++pass;
        for (size_t l = 0; l < tok.size(); ++l)
            for (int e : tok[l]) {
                ++uses[l][size_t(e)];
                lastPass[l][size_t(e)] = pass;
            }
    }
    const std::vector<std::pair<int, int>> resident = cache->residentRecords();
    return learnedEntries(resident, uses, lastPass);
}

} // namespace waste::cache
