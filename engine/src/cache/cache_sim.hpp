// Trace replay through the engine's real ExpertCache (the `waste cache-sim` verb and the
// planner's hit-rate prediction): demand accesses only, token by token, layer by layer,
// ids in listed order, cold start, one slot per expert record.
#pragma once

#include "waste/cache_sim.hpp"

#include "cache/eviction_policy.hpp"
#include "cache/routing_trace.hpp"

#include <cstdint>
#include <string>

namespace waste::cache {

using CacheSimResult = waste::CacheSimResult; // declared in waste/cache_sim.hpp (optHitRate 0 when not computed)

CacheSimResult cacheSim(const RoutingTrace &trace, int slots, PolicyKind policy, bool withOptimum = true);

} // namespace waste::cache
