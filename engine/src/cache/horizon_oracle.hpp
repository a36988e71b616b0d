// A yardstick between the online policies and Belady's optimum: a cache that knows the
// routing of the next few passes exactly, and nothing beyond.
//
// Why: on routing with little repetition (a byte-level model, where the next token is
// uncertain by the model's own ~2 bits per byte), Belady's share is out of reach for reasons
// that have nothing to do with a policy's estimates: it sees every future token. This cache
// sees the rest of the current pass and the next `passes` passes; among the records whose
// next use it knows it evicts the farthest, and it evicts the records whose next use it does
// not know first, the least recently used of them. So a policy that could predict the next
// token's whole routing perfectly would do about as well as passes = 1; an online policy,
// which cannot, should be read against it.
#pragma once

#include "cache/routing_trace.hpp"

#include <cstdint>

namespace waste::cache {

// Demand hits of that cache of `slots` records replaying `trace` from cold, in Belady's order
// of accesses (token by token, layer by layer, ids as listed). passes = 0: it knows only the
// rest of the current pass; a horizon past the trace's end gives Belady's hits.
int64_t horizonOracleHits(const RoutingTrace &trace, int slots, int passes);

} // namespace waste::cache
