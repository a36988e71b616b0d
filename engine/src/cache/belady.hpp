// Belady's MIN: the offline optimum the online policies are measured against.
#pragma once

#include "cache/routing_trace.hpp"

#include <cstdint>
#include <span>
#include <utility>

namespace waste::cache {

// Demand hits of an optimal cache of `slots` records replaying `trace` from cold
// (token by token, layer by layer, ids in listed order): on a miss with the cache full,
// evict the resident record whose next use lies farthest ahead (never used again first).
// `resident`: records (layer, expert) in the cache before the first access (a warm start;
// at most `slots` of them).
int64_t beladyHits(const RoutingTrace &trace, int slots, std::span<const std::pair<int, int>> resident = {});

} // namespace waste::cache
