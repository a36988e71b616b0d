// reuse: the default expert-cache policy. It evicts the record least likely to be used
// at its next chance, per unit of time it would hold the slot until then.
//
// Why this shape: every MoE layer is visited once per forward pass, in order, so a record
// can only be used again when its layer comes round: reuse distance is counted in passes
// (tokens), and the only question about a resident record is "will the router pick it the
// next time its layer runs?". Belady answers that with the future; we estimate it from
// the past, and we can estimate it well because the router's whole choice is visible:
// at every layer visit we see, for every expert of the layer (cached or not), whether it
// was picked. That is L x E labelled observations per token, enough to learn online.
//
//  * State of a record: g = passes since its last use, counted at its next chance, and c =
//    its use count (halved every 16 passes) at that last use, in geometric classes.
//    While unused, g grows and c stays, so (g, c) is a proper state.
//  * Hazard table h(g, c) = share of the observed (g, c) chances at which the expert was
//    picked, smoothed toward the same g over all classes, then toward the overall rate,
//    and slowly forgotten (x0.995 per pass) so it follows drift. Recency (MoE routing
//    reuses the previous token's experts far more than their average rate) and frequency
//    both enter through the table, in whatever proportion this model's router shows.
//  * Per-record correction: picked / predicted over that record's own past chances (at
//    gap 1, 2 and 3+), shrunk toward 1. Some experts are "sticky" beyond what their count
//    says; this learns it per record without a per-record table.
//  * Score = h x correction / (1 + d), d in (0, 1] = passes until the record's layer
//    runs next. Of two equally likely records, the one whose chance comes sooner costs
//    less slot time to keep (ties to "farthest next use" in Belady's sense).
//
// The cache tells the policy each layer's full choice before serving it (layerDemand), as
// the router produces it; the learning happens there. Records of one layer share d, so
// the evictable slots sit in one set per layer ordered by chance; a set is re-ranked only
// when its layer's chances move (a new pass, the layer's own visit), and a victim is the
// best of the layers' minima: O(layers) per miss, which keeps trace replays fast too.
#pragma once

#include "cache/eviction_policy.hpp"

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace waste::cache {

class ReusePolicy final : public EvictionPolicy {
public:
    static constexpr double kCountHalfLife = 16.0; // passes
    static constexpr double kClassGrowth = 1.5;     // class k holds counts up to 1.5^k
    static constexpr int kClasses = 12;
    static constexpr int kGaps = 32;                // g = 1..31, then 32 and over; index kGaps = never used
    static constexpr double kTableKeep = 0.995;     // hazard-table forgetting per pass
    static constexpr double kCellPrior = 4.0;       // pseudo-observations toward the coarser estimate
    static constexpr double kRecordKeep = 0.99;     // per-record correction forgetting per chance
    static constexpr double kRecordPrior = 3.0;

    explicit ReusePolicy(const PolicyShape &shape);
    void beginToken() override;
    void atLayer(int layer) override { m_layer = layer; }
    void layerDemand(int layer, std::span<const int> experts) override;
    void filled(int slot, int key, bool demand) override;
    void used(int slot, int key) override;
    void setEvictable(int slot, bool evictable) override;
    int victim() override;
    void seedUses(int key, double uses) override;

    // The estimated chance that `key` is picked at its next opportunity (for tests).
    double nextUseChance(int key) const;

private:
    int gapIndex(int key, int64_t pass) const;
    int classOf(double count) const;
    void recordUse(int key);
    void refreshHazard();
    void unlink(int slot);
    void link(int slot);
    void rerank(int layer);

    PolicyShape m_shape;
    int64_t m_pass = 0; // current forward pass, 1-based once started
    int m_layer = -1;   // layer being served; -1 before the pass's first layer
    // per record (layer * experts + expert)
    std::vector<int64_t> m_lastUse; // pass of the last use, -1 never
    std::vector<float> m_count;     // aged use count at the last use
    std::vector<uint8_t> m_class;   // classOf(m_count)
    std::vector<float> m_picked;    // per record x 3 gap buckets: aged picks
    std::vector<float> m_expected;  // ... and aged predicted picks
    // hazard table, (kGaps + 1) x kClasses
    std::vector<double> m_hits, m_trials, m_hazard;
    // per slot
    std::vector<int> m_slotKey;
    std::vector<char> m_evictable;
    std::vector<double> m_slotChance; // the chance the slot is filed under
    // per layer: evictable slots by chance, and whether the chances are current
    std::vector<std::set<std::pair<double, int>>> m_byLayer;
    std::vector<char> m_stale;
    std::vector<char> m_rankedAhead; // ranked while the layer was still to come in the pass
    std::vector<char> m_pickedNow; // scratch: experts of the layer being observed
};

} // namespace waste::cache
