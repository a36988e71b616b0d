// layerfreq: the previous default expert-cache policy (kept selectable; `reuse` replaced it).
//
// Why: one token touches top_k x layers records in a fixed layer order, so a record's
// reuse distance is about one token's worth of accesses — exactly the size of a one-
// working-set cache. Recency (LRU) therefore evicts every record just before it comes
// back. What does predict reuse is how often the router picked the expert lately:
//
//  * score = uses, each weighted 2^(-age/H) with age in tokens (half-life H = 16 tokens).
//    The score survives eviction (a small table over all layers x experts), so a popular
//    expert that was pushed out comes back with its standing instead of starting at one
//    hit, which is what sinks the reference's LFRU.
//  * A record that was just used (and one that misses) ranks by its history, so a stream
//    of one-off experts evicts itself rather than the hot set (scan resistance).
//  * Layer position: divide the score by 1 + d/L, d = layers until the record's layer is
//    next visited (1..L). Of two equally popular records, the one whose chance of use
//    lies a whole cycle away goes first — Belady's "farthest next use" applied to the
//    only part of the future we know for sure, the layer order.
//
// Ranking is kept in log space, log2(score) + t/H, which does not change as time passes
// between uses; so the evictable slots sit in one ordered set per layer and a victim is
// the minimum over layers: O(layers + log slots) per miss.
#pragma once

#include "cache/eviction_policy.hpp"

#include <set>
#include <utility>

namespace waste::cache {

class LayerFreqPolicy final : public EvictionPolicy {
public:
    static constexpr double kHalfLifeTokens = 16.0;

    explicit LayerFreqPolicy(const PolicyShape &shape);
    void beginToken() override { ++m_token; }
    void atLayer(int layer) override { m_layer = layer; }
    void filled(int slot, int key, bool demand) override;
    void used(int slot, int key) override;
    void setEvictable(int slot, bool evictable) override;
    int victim() override;
    void seedUses(int key, double uses) override;

private:
    void bump(int key);
    void place(int slot, int key);
    void unlink(int slot);
    void link(int slot);

    PolicyShape m_shape;
    int64_t m_token = 0;
    int m_layer = 0;
    std::vector<double> m_rank;      // per record: log2(aged uses) + lastUse/H
    std::vector<int64_t> m_lastUse;  // per record: token of the last counted use, -1 never
    std::vector<int> m_slotKey;      // per slot: record key, -1 empty
    std::vector<double> m_slotRank;  // per slot: rank the slot is filed under
    std::vector<char> m_evictable;
    std::vector<std::set<std::pair<double, int>>> m_byLayer; // evictable slots per layer
    std::vector<double> m_distancePenalty; // log2(1 + d/L) for d = 0..L
};

} // namespace waste::cache
