// Trace replay through the engine's real ExpertCache (the `waste cache-sim` verb and the
// planner's hit-rate prediction): demand accesses only, token by token, layer by layer,
// ids in listed order, cold start, one slot per expert record.
#pragma once

#include "cache/eviction_policy.hpp"
#include "cache/routing_trace.hpp"

#include <cstdint>
#include <string>

namespace waste::cache {

struct CacheSimResult {
    int64_t accesses = 0;
    int64_t hits = 0;
    double hitRate = 0;
    double optHitRate = 0; // Belady's MIN on the same trace and slots (if computed)
    std::string policy;
    int slots = 0;
};

CacheSimResult cacheSim(const RoutingTrace &trace, int slots, PolicyKind policy, bool withOptimum = true);

} // namespace waste::cache
