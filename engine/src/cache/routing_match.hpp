// The remembered forward pass whose routing is closest to the current pass's so far.
//
// Why: a token routes much like the earlier tokens its hidden state resembles (the same word
// again, a repeated phrase), across all its layers at once. On the OLMoE trace, the past pass
// that best matches a pass's first layers picked 69-73 % of the experts the pass then picks
// in its remaining layers, against 44 % for the previous token; and the pass after that match
// picked 58 % of the next token's experts (previous token: 43 %). So the match predicts the
// layers still to come in this pass ("ahead"), and the pass after the match predicts the
// layers already served, whose next chance is in the next pass ("behind").
//
// The score of a remembered pass is its share of this pass's picks, layer by layer, older
// layers decaying by kLayerKeep. The current match is kept until another scores
// kSwitchRatio times higher, which keeps predictions (and the records the cache must re-rank)
// from flickering between near-equal candidates. Deterministic: ties go to the latest pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace waste::cache {

class RoutingMatch {
public:
    static constexpr int kHistory = 256;         // remembered passes
    static constexpr double kLayerKeep = 0.7;    // score decay per layer
    static constexpr double kSwitchRatio = 2.0;  // a new match must score this much higher

    enum Side : uint8_t { Ahead = 1, Behind = 2 };

    RoutingMatch(int layers, int experts);

    // A new pass starts. Until it shows its own routing, the pass after the last pass's
    // match predicts all of it.
    void beginPass();
    // This pass's choice for `layer` (ids in range, each once). Returns true when a source moved;
    // previous() then names the sources before the move.
    bool observe(int layer, std::span<const int> experts);

    bool valid(Side side) const { return validPass(source(side)); }
    int64_t source(Side side) const { return side == Ahead ? m_ahead : m_behind; }
    // Whether the pass predicting `side` picked record `key` (layer * experts + expert).
    bool predicts(int key, Side side) const { return (m_mark[size_t(key)] & side) != 0; }
    bool validPass(int64_t pass) const { return pass >= 1 && pass <= m_pass && pass > m_pass - kHistory; }
    const std::vector<int> &picks(int64_t pass, int layer) const
    {
        return m_history[size_t(pass % kHistory) * size_t(m_layers) + size_t(layer)];
    }
    int64_t previousAhead() const { return m_previousAhead; }
    int64_t previousBehind() const { return m_previousBehind; }

private:
    void mark(int64_t pass, uint8_t bit, bool on);
    void setSources(int64_t ahead, int64_t behind);

    int m_layers, m_experts;
    int64_t m_pass = 0;
    std::vector<std::vector<int>> m_history; // pass % kHistory x layers: picked experts
    std::vector<double> m_score;             // pass % kHistory: match with this pass so far
    std::vector<uint8_t> m_mark;             // per record: Side bits of the sources that picked it
    std::vector<char> m_now;                 // scratch: this layer's picks
    int64_t m_match = -1;                    // the best match so far (of the last pass, before this one shows)
    int64_t m_ahead = -1, m_behind = -1;
    int64_t m_previousAhead = -1, m_previousBehind = -1;
};

} // namespace waste::cache
