// Trace replay through the engine's real ExpertCache (the `waste cache-sim` verb and the
// planner's hit-rate prediction): demand accesses only, token by token, layer by layer,
// ids in listed order, one slot per expert record; from a cold cache, or warm-started as the
// engine opens after a --learn run (warm_start.hpp).
#pragma once

#include "waste/cache_sim.hpp"

#include "cache/eviction_policy.hpp"
#include "cache/routing_trace.hpp"
#include "cache/usage_record.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace waste::cache {

using CacheSimResult = waste::CacheSimResult; // declared in waste/cache_sim.hpp (optHitRate 0 when not computed)

// warm: a usage record (trace layer indices) to start from, as StreamedExpertSource::warmFrom
// does; Belady's optimum then starts with the same records resident.
CacheSimResult cacheSim(const RoutingTrace &trace, int slots, PolicyKind policy, bool withOptimum = true,
                        const std::vector<UsageEntry> *warm = nullptr);

// What a --learn run over `trace` records: the records resident at its end in a cache of
// `slots` under `policy`, with their use counts over the trace.
std::vector<UsageEntry> learnedUsage(const RoutingTrace &trace, int slots, PolicyKind policy);

} // namespace waste::cache
