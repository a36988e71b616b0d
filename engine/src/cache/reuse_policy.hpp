// reuse: the default expert-cache policy. It evicts the record with the fewest expected hits
// per unit of slot time it would hold, estimated from what the router has shown so far.
//
// Why this shape: every MoE layer is visited once per forward pass, in order, so a record
// can only be used again when its layer comes round: reuse distance is counted in passes
// (tokens), and the question about a resident record is "will the router pick it the next
// times its layer runs?". Belady answers that with the future; we estimate it from the past,
// and we can estimate it well because the router's whole choice is visible: at every layer
// visit we see, for every expert of the layer (cached or not), whether it was picked. That
// is L x E labelled observations per token, enough to learn online.
//
//  * State of a record: g = passes since its last use, counted at its next chance, and c =
//    its use count (halved every 16 passes) at that last use, in geometric classes.
//    While unused, g grows and c stays, so (g, c) is a proper state.
//  * Hazard table h(g, c) = share of the observed (g, c) chances at which the expert was
//    picked, smoothed toward the same g over all classes, then toward the overall rate,
//    and slowly forgotten (x0.995 per pass) so it follows drift. Recency (MoE routing
//    reuses the previous token's experts far more than their average rate) and frequency
//    both enter through the table, in whatever proportion this model's router shows.
//  * Routing match (routing_match.hpp): the remembered pass closest to this one so far
//    predicts the layers still to come, and the pass after it the layers already served.
//    A second table h(prediction, g, c) learns how much that prediction is worth here.
//  * Per-record correction: picked / predicted over that record's own past chances (at
//    gap 1, 2 and 3+), shrunk toward 1. Some experts are "sticky" beyond what their count
//    says; this learns it per record without a per-record table.
//  * Which estimate to trust is learned too: the four combinations (table or table with the
//    match, each with or without the per-record correction) are scored at every chance of a
//    record seen before by their log loss (aged like the tables), and each pass uses the one
//    with the lowest, a feature counting only if it saves 2 % of the loss: a richer estimate
//    also ranks less steadily (the match moves, the correction chases noise), which costs hits
//    its log loss does not show (on the synthetic shapes, estimates within 1 % of the plain
//    table's loss gave up to 1 point less hit rate). On the OLMoE trace the match saves
//    23-28 % (6 % on the held-out half, started cold) and wins; on routing without repeated
//    tokens it saves under 1 %, and the plain table or the correction is used, without a
//    setting.
//  * Value = expected hits per unit of slot time (the "hit density" of LHD, Beckmann et al.,
//    NSDI'18): over the next H = 1..kHorizon chances, P(picked at one of them) / expected
//    passes held until the first pick or the H-th chance, the best H. The first chance is
//    d/L passes away (d = layers until the record's layer runs); later ones are a pass
//    apart and use the hazard at the gaps still to come. A record likely picked soon is
//    cheap to keep; one that is only likely eventually pays for the wait.
//
// The cache tells the policy each layer's full choice before serving it (layerDemand), as
// the router produces it; the learning happens there. The evictable slots sit in one set
// per layer ordered by value; a set is re-ranked when its layer's chances move (a new pass,
// the layer's own visit, the layer's next chance halving its distance), only records whose
// prediction changed are refiled when the match moves, and a victim is the best of the
// layers' minima: O(layers) per miss, which keeps trace replays fast too.
#pragma once

#include "cache/eviction_policy.hpp"
#include "cache/routing_match.hpp"

#include <array>
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
    static constexpr double kTableKeep = 0.995;     // hazard-table (and estimate-loss) forgetting per pass
    static constexpr double kCellPrior = 4.0;       // pseudo-observations toward the coarser estimate
    static constexpr double kRecordKeep = 0.99;     // per-record correction forgetting per chance
    static constexpr double kRecordPrior = 3.0;
    static constexpr int kPredictions = 3;          // no match / the match did not pick it / it did
    static constexpr int kEstimates = 4;            // bit 0: per-record correction, bit 1: routing match
    static constexpr double kFeatureMargin = 0.02;  // log loss a feature must save to be used
    static constexpr int kHorizon = 8;              // chances looked ahead in a record's value

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
    // The estimate in use this pass (for tests): bit 0 correction, bit 1 routing match.
    int estimateInUse() const { return m_estimate; }

private:
    int gapIndex(int key, int64_t pass) const;
    int classOf(double count) const;
    void recordUse(int key);
    void refreshHazard();
    int prediction(int key, bool ahead) const;
    double correction(int key, int bucket, int estimate) const;
    double chance(int key, int g, int prediction, int estimate) const;
    double keepValue(int key) const;
    int distance(int layer) const;
    void refileMoved();
    void unlink(int slot);
    void link(int slot);
    void rerank(int layer);

    PolicyShape m_shape;
    int64_t m_pass = 0; // current forward pass, 1-based once started
    int m_layer = -1;   // layer being served; -1 before the pass's first layer
    // per record (layer * experts + expert)
    // pass of the last use, kNeverUsed never; a seeded record (seedUses at open) has pass 0 - 1
    static constexpr int64_t kNeverUsed = INT64_MIN;
    std::vector<int64_t> m_lastUse;
    std::vector<float> m_count;       // aged use count at the last use
    std::vector<uint8_t> m_class;     // classOf(m_count)
    std::vector<float> m_picked;      // per record x 3 gap buckets: aged picks
    std::vector<float> m_expected;    // ... aged predicted picks by the plain table
    std::vector<float> m_expectedMatch; // ... and by the table with the match
    std::vector<int> m_keySlot;       // the slot holding the record, -1 none
    // hazard tables: (kGaps + 1) x kClasses, and kPredictions of those
    std::vector<double> m_hits, m_trials, m_hazard;
    std::vector<double> m_matchHits, m_matchTrials, m_matchHazard;
    RoutingMatch m_match;
    std::array<double, kEstimates> m_loss{}; // aged log loss of each estimate
    int m_estimate = 0;
    // per slot
    std::vector<int> m_slotKey;
    std::vector<char> m_evictable;
    std::vector<double> m_slotValue; // the value the slot is filed under
    // per layer: evictable slots by value, and when they were ranked
    std::vector<std::set<std::pair<double, int>>> m_byLayer;
    std::vector<char> m_stale;
    std::vector<char> m_rankedAhead;  // ranked while the layer was still to come in the pass
    std::vector<int> m_rankedDistance; // distance() when ranked
    std::vector<int> m_frontSlot;     // the set's first slot when its value was last computed
    std::vector<int> m_frontAt;       // ... at this m_layer
    std::vector<double> m_frontValue;
    std::vector<char> m_pickedNow;    // scratch: experts of the layer being observed
    std::vector<int> m_picks;         // ... the same as a list
    std::vector<int> m_scratch;       // scratch: a set's slots while it is re-ranked
};

} // namespace waste::cache
