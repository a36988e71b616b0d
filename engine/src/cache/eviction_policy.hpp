// Eviction policies for the expert cache.
//
// The cache owns slots, states and pins; a policy only ranks the slots the cache has
// declared evictable (resident, not pinned) and names a victim. Records are keyed
// layer * experts + expert, with layer the 0-based MoE layer index.
//
// Policies:
//   reuse (default)      the learned chance that the router picks the record at its next
//                        passes (helped by the past pass that routed most alike), per slot
//                        time until then. See reuse_policy.hpp.
//   layerfreq            frequency with exponential aging per token, remembered across
//                        evictions, discounted by how far ahead in the layer cycle the
//                        record's next chance of use lies. See layer_freq_policy.hpp.
//   lru                  least recently used (collapses to 0 % below one working set).
//   lfru                 the reference engine's policy: 16 sampled slots, fewest hits since
//                        fill, ties to the oldest; hits reset to 1 on every fill.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waste::cache {

enum class PolicyKind { Reuse, LayerFreq, Lru, SampledLfru };
inline constexpr PolicyKind kDefaultPolicy = PolicyKind::Reuse;

std::string policyName(PolicyKind kind);
// Throws waste::Error(Argument) listing the known names.
PolicyKind parsePolicy(std::string_view name);
std::vector<std::string> policyNames();

struct PolicyShape {
    int slots = 0;
    int layers = 0;  // MoE layers (the length of one cycle of demand accesses)
    int experts = 0; // experts per layer
};

class EvictionPolicy {
public:
    virtual ~EvictionPolicy() = default;

    // A new forward pass (one decode token or one prefill chunk) starts.
    virtual void beginToken() = 0;
    // A demand access of `layer` is about to be served (sets the position in the cycle).
    virtual void atLayer(int layer) = 0;
    // The router's whole choice for `layer` in this pass, told once before it is served.
    virtual void layerDemand(int /*layer*/, std::span<const int> /*experts*/) {}
    // `slot` now holds `key` (filled, or about to be); demand = the router asked for it.
    virtual void filled(int slot, int key, bool demand) = 0;
    // A demand access found `key` resident in `slot`.
    virtual void used(int slot, int key) = 0;
    // The record in `slot` may (true) or may not (false) be chosen as a victim.
    virtual void setEvictable(int slot, bool evictable) = 0;
    // An evictable slot to reuse, or -1 when none is.
    virtual int victim() = 0;
    // Warm start: pretend `key` was used `uses` times before this run.
    virtual void seedUses(int key, double uses) = 0;
};

std::unique_ptr<EvictionPolicy> makePolicy(PolicyKind kind, const PolicyShape &shape);

} // namespace waste::cache
