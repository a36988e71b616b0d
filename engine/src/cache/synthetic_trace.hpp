// Synthetic expert routing for checking cache policies away from the one real trace we
// have: per layer, Zipf popularity over the experts, a ranking that drifts (neighbouring
// ranks swap as the text moves on), and token-to-token locality that varies by token
// (some tokens reuse most of the previous token's experts, some almost none), which is
// what real MoE routing shows. Deterministic for a given seed on every platform.
#pragma once

#include "cache/routing_trace.hpp"

#include <cstdint>
#include <functional>
#include <vector>

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

// What the generator knew when it drew token `token` (its routing is `layers`):
// rankToExpert[layer][rank] = the expert at that popularity rank after this token's drift.
// For reference policies that are told the odds (known_odds_replay.hpp); observing draws
// nothing from the generator's random stream, so the trace is the same with or without it.
using SyntheticObserver = std::function<void(int token, const std::vector<std::vector<int>> &layers,
                                             const std::vector<std::vector<int>> &rankToExpert)>;

RoutingTrace zipfDriftTrace(const SyntheticTraceSpec &spec, const SyntheticObserver &observe = {});
// The chance that the expert at popularity rank `rank` (0-based) is among a token's fresh
// (not reused) picks: 1 - (1 - w_r / sum w)^topK, which ignores that picks are drawn without
// replacement and that reused experts take some of the top-k. For reference policies.
std::vector<double> zipfPickChance(const SyntheticTraceSpec &spec);

// The same trace without its first `skip` tokens (a held-out second half, cold-started).
RoutingTrace traceTail(const RoutingTrace &trace, size_t skip);
RoutingTrace traceHead(const RoutingTrace &trace, size_t keep);

} // namespace waste::cache
