// A recorded expert routing: for every decode token, the expert ids each MoE layer chose.
// Read from the JSON Lines format of the reference tooling:
//   {"tok": n, "layers": [[e0, e1, ...], ...]}   (one list per MoE layer, in layer order)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste::cache {

struct RoutingTrace {
    // tokens[t][layer] = expert ids in listed order
    std::vector<std::vector<std::vector<int>>> tokens;
    int layers = 0;  // MoE layers per token (the widest token)
    int experts = 0; // 1 + the largest expert id seen
    int topK = 0;    // ids per layer of the first token

    // One token's demand accesses: top-k x MoE layers.
    int64_t workingSet() const { return int64_t(layers) * topK; }
    int64_t accesses() const;
};

// Throws waste::Error(Format) naming the file and line on malformed input.
RoutingTrace loadRoutingTrace(const std::string &path);
RoutingTrace parseRoutingTrace(const std::string &text, const std::string &nameForErrors);

} // namespace waste::cache
