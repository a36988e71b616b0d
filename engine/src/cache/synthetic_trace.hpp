// Synthetic expert routing for checking cache policies away from the one real trace we
// have: per layer, Zipf popularity over the experts, a ranking that drifts (neighbouring
// ranks swap as the text moves on), and token-to-token locality that varies by token
// (some tokens reuse most of the previous token's experts, some almost none), which is
// what real MoE routing shows. Deterministic for a given seed on every platform.
#pragma once

#include "cache/routing_trace.hpp"

#include <cstdint>

namespace waste::cache {

struct SyntheticTraceSpec {
    int tokens = 400;
    int layers = 16;
    int experts = 64;
    int topK = 8;
    double zipf = 1.0;       // popularity of rank r is 1 / r^zipf
    double drift = 0.5;      // rank swaps per layer per token (fractional: a probability)
    double locality = 0.3;   // mean chance that a previous-token expert is picked again
    uint64_t seed = 1;
};

RoutingTrace zipfDriftTrace(const SyntheticTraceSpec &spec);

// The same trace without its first `skip` tokens (a held-out second half, cold-started).
RoutingTrace traceTail(const RoutingTrace &trace, size_t skip);
RoutingTrace traceHead(const RoutingTrace &trace, size_t keep);

} // namespace waste::cache
