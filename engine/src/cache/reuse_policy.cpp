#include "cache/reuse_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace waste::cache {

namespace {
// Gap buckets of the per-record correction: picked right after a use, one pass later, later.
int recordBucket(int gapIndex) { return gapIndex < 2 ? gapIndex : 2; }
constexpr int kCorrection = 1, kWithMatch = 2; // bits of an estimate
} // namespace

ReusePolicy::ReusePolicy(const PolicyShape &shape)
    : m_shape(shape),
      m_lastUse(size_t(shape.layers) * size_t(shape.experts), kNeverUsed),
      m_count(m_lastUse.size(), 0.0f),
      m_class(m_lastUse.size(), 0),
      m_picked(m_lastUse.size() * 3, 0.0f),
      m_expected(m_lastUse.size() * 3, 0.0f),
      m_expectedMatch(m_lastUse.size() * 3, 0.0f),
      m_keySlot(m_lastUse.size(), -1),
      m_hits(size_t(kGaps + 1) * kClasses, 0.0),
      m_trials(m_hits.size(), 0.0),
      m_hazard(m_hits.size(), 0.0),
      m_matchHits(m_hits.size() * kPredictions, 0.0),
      m_matchTrials(m_matchHits.size(), 0.0),
      m_matchHazard(m_matchHits.size(), 0.0),
      m_match(shape.layers, shape.experts),
      m_slotKey(shape.slots, -1),
      m_evictable(shape.slots, 0),
      m_slotValue(shape.slots, 0.0),
      m_byLayer(shape.layers),
      m_stale(shape.layers, 1),
      m_rankedAhead(shape.layers, 0),
      m_rankedDistance(shape.layers, 0),
      m_frontSlot(shape.layers, -1),
      m_frontAt(shape.layers, -2),
      m_frontValue(shape.layers, 0.0),
      m_pickedNow(shape.experts, 0)
{
    refreshHazard();
}

int ReusePolicy::classOf(double count) const
{
    int c = 0;
    for (double top = 1.0; count > top * 1.0001 && c < kClasses - 1; top *= kClassGrowth)
        ++c;
    return c;
}

int ReusePolicy::gapIndex(int key, int64_t pass) const
{
    if (m_lastUse[key] == kNeverUsed)
        return kGaps;
    return int(std::clamp<int64_t>(pass - m_lastUse[key] - 1, 0, kGaps - 1));
}

void ReusePolicy::refreshHazard()
{
    // Smoothing chain: cell (g, c) -> all classes at g -> every observation.
    double allHits = 0, allTrials = 0;
    for (size_t i = 0; i < m_hits.size(); ++i) {
        allHits += m_hits[i];
        allTrials += m_trials[i];
    }
    const double overall = (allHits + 1.0) / (allTrials + 2.0);
    for (int g = 0; g <= kGaps; ++g) {
        double gh = 0, gt = 0;
        for (int c = 0; c < kClasses; ++c) {
            gh += m_hits[size_t(g) * kClasses + c];
            gt += m_trials[size_t(g) * kClasses + c];
        }
        const double atGap = (gh + overall * kCellPrior) / (gt + kCellPrior);
        for (int c = 0; c < kClasses; ++c) {
            const size_t i = size_t(g) * kClasses + c;
            m_hazard[i] = (m_hits[i] + atGap * kCellPrior) / (m_trials[i] + kCellPrior);
        }
    }
    // ... and a cell with the match's prediction -> the same cell without it.
    for (size_t i = 0; i < m_matchHits.size(); ++i)
        m_matchHazard[i] = (m_matchHits[i] + m_hazard[i % m_hits.size()] * kCellPrior) / (m_matchTrials[i] + kCellPrior);
}

void ReusePolicy::beginToken()
{
    ++m_pass;
    m_layer = -1;
    for (size_t i = 0; i < m_hits.size(); ++i) {
        m_hits[i] *= kTableKeep;
        m_trials[i] *= kTableKeep;
    }
    for (size_t i = 0; i < m_matchHits.size(); ++i) {
        m_matchHits[i] *= kTableKeep;
        m_matchTrials[i] *= kTableKeep;
    }
    for (double &loss : m_loss)
        loss *= kTableKeep;
    double best = std::numeric_limits<double>::infinity();
    for (int e = 0; e < kEstimates; ++e) {
        const int features = (e & kCorrection ? 1 : 0) + (e & kWithMatch ? 1 : 0);
        const double loss = m_loss[e] * (1.0 + kFeatureMargin * features);
        if (loss < best) {
            best = loss;
            m_estimate = e;
        }
    }
    m_match.beginPass();
    refreshHazard();
    std::fill(m_stale.begin(), m_stale.end(), 1);
}

void ReusePolicy::recordUse(int key)
{
    if (m_lastUse[key] == m_pass)
        return; // several uses in one pass (a prefill chunk) count once
    const double aged = m_lastUse[key] == kNeverUsed
                            ? 0.0
                            : double(m_count[key]) * std::exp2(-double(m_pass - m_lastUse[key]) / kCountHalfLife);
    m_count[key] = float(aged + 1.0);
    m_class[key] = uint8_t(classOf(aged + 1.0));
    m_lastUse[key] = m_pass;
}

int ReusePolicy::prediction(int key, bool ahead) const
{
    const auto side = ahead ? RoutingMatch::Ahead : RoutingMatch::Behind;
    if (!m_match.valid(side))
        return 0;
    return m_match.predicts(key, side) ? 2 : 1;
}

double ReusePolicy::correction(int key, int bucket, int estimate) const
{
    if (!(estimate & kCorrection))
        return 1.0;
    const size_t r = size_t(key) * 3 + size_t(bucket);
    const auto &expected = (estimate & kWithMatch) ? m_expectedMatch : m_expected;
    return (double(m_picked[r]) + kRecordPrior) / (double(expected[r]) + kRecordPrior);
}

double ReusePolicy::chance(int key, int g, int prediction, int estimate) const
{
    const size_t cell = size_t(g) * kClasses + m_class[key];
    const double p = (estimate & kWithMatch) ? m_matchHazard[size_t(prediction) * m_hits.size() + cell] : m_hazard[cell];
    return g < kGaps ? p * correction(key, recordBucket(g), estimate) : p;
}

void ReusePolicy::layerDemand(int layer, std::span<const int> experts)
{
    if (layer < 0 || layer >= m_shape.layers)
        return;
    m_layer = layer;
    const int E = m_shape.experts;
    m_picks.clear();
    for (int e : experts)
        if (e >= 0 && e < E && !m_pickedNow[e]) {
            m_pickedNow[e] = 1;
            m_picks.push_back(e);
        }
    // Every expert of the layer had its chance now: learn from all of them. (The estimates'
    // likelihoods are multiplied up and their logs taken once a layer, or before underflow.)
    std::array<double, kEstimates> likelihood;
    likelihood.fill(1.0);
    for (int e = 0; e < E; ++e) {
        const int key = layer * E + e;
        if (m_lastUse[key] == m_pass)
            continue; // already seen in this pass
        const int g = gapIndex(key, m_pass);
        const size_t cell = size_t(g) * kClasses + m_class[key];
        const double picked = m_pickedNow[e];
        const int pred = prediction(key, true);
        if (g < kGaps) // score the estimates where they differ: records seen before
            for (int s = 0; s < kEstimates; ++s) {
                const double p = std::clamp(chance(key, g, pred, s), 1e-4, 1.0 - 1e-4);
                likelihood[s] *= picked > 0 ? p : 1.0 - p;
                if (likelihood[s] < 1e-250) {
                    m_loss[s] -= std::log(likelihood[s]);
                    likelihood[s] = 1.0;
                }
            }
        m_trials[cell] += 1.0;
        m_hits[cell] += picked;
        const size_t matchCell = size_t(pred) * m_hits.size() + cell;
        m_matchTrials[matchCell] += 1.0;
        m_matchHits[matchCell] += picked;
        if (g < kGaps) {
            const size_t r = size_t(key) * 3 + recordBucket(g);
            m_picked[r] = float(m_picked[r] * kRecordKeep + picked);
            m_expected[r] = float(m_expected[r] * kRecordKeep + m_hazard[cell]);
            m_expectedMatch[r] = float(m_expectedMatch[r] * kRecordKeep + m_matchHazard[matchCell]);
        }
    }
    for (int s = 0; s < kEstimates; ++s)
        m_loss[s] -= std::log(likelihood[s]);
    for (int e : m_picks)
        m_pickedNow[e] = 0;
    if (m_match.observe(layer, m_picks))
        refileMoved();
    for (int e : m_picks)
        recordUse(layer * E + e);
    m_stale[layer] = 1; // every record of the layer has a new chance now
}

void ReusePolicy::refileMoved()
{
    const bool wasValid[2] = {m_match.validPass(m_match.previousAhead()), m_match.validPass(m_match.previousBehind())};
    if (wasValid[0] != m_match.valid(RoutingMatch::Ahead) || wasValid[1] != m_match.valid(RoutingMatch::Behind)) {
        std::fill(m_stale.begin(), m_stale.end(), 1); // every prediction changed kind
        return;
    }
    // Only records the old or the new source picked have a new prediction.
    const int E = m_shape.experts;
    for (int l = 0; l < m_shape.layers; ++l) {
        if (m_stale[l])
            continue;
        const bool ahead = l > m_layer;
        const int64_t sources[2] = {ahead ? m_match.previousAhead() : m_match.previousBehind(),
                                    m_match.source(ahead ? RoutingMatch::Ahead : RoutingMatch::Behind)};
        for (int64_t source : sources) {
            if (!m_match.validPass(source))
                continue;
            for (int e : m_match.picks(source, l)) {
                const int slot = m_keySlot[l * E + e];
                if (slot >= 0 && m_evictable[slot]) {
                    unlink(slot);
                    link(slot);
                }
            }
        }
    }
}

void ReusePolicy::unlink(int slot)
{
    if (!m_evictable[slot] || m_slotKey[slot] < 0)
        return;
    const int layer = m_slotKey[slot] / m_shape.experts;
    m_byLayer[layer].erase({m_slotValue[slot], slot});
    m_frontSlot[layer] = -1;
}

void ReusePolicy::link(int slot)
{
    if (!m_evictable[slot] || m_slotKey[slot] < 0)
        return;
    const int layer = m_slotKey[slot] / m_shape.experts;
    m_slotValue[slot] = keepValue(m_slotKey[slot]);
    m_byLayer[layer].insert({m_slotValue[slot], slot});
    m_frontSlot[layer] = -1;
}

void ReusePolicy::filled(int slot, int key, bool demand)
{
    unlink(slot);
    if (demand)
        recordUse(key);
    if (m_slotKey[slot] >= 0 && m_keySlot[m_slotKey[slot]] == slot)
        m_keySlot[m_slotKey[slot]] = -1;
    m_slotKey[slot] = key;
    m_keySlot[key] = slot;
    link(slot);
}

void ReusePolicy::used(int slot, int key)
{
    unlink(slot);
    recordUse(key);
    m_slotKey[slot] = key;
    m_keySlot[key] = slot;
    link(slot);
}

void ReusePolicy::setEvictable(int slot, bool evictable)
{
    if (bool(m_evictable[slot]) == evictable)
        return;
    unlink(slot);
    m_evictable[slot] = evictable;
    link(slot);
}

void ReusePolicy::seedUses(int key, double uses)
{
    if (uses <= 0)
        return;
    m_count[key] = float(uses);
    m_class[key] = uint8_t(classOf(uses));
    // As if used in the pass just before this run: at open that is pass -1, which must not
    // read as "never used" (it did, when -1 was the sentinel, and lost every seed).
    m_lastUse[key] = m_pass - 1;
}

double ReusePolicy::nextUseChance(int key) const
{
    const bool ahead = key / m_shape.experts > m_layer;
    return chance(key, gapIndex(key, ahead ? m_pass : m_pass + 1), prediction(key, ahead), m_estimate);
}

int ReusePolicy::distance(int layer) const
{
    return layer > m_layer ? layer - m_layer : layer - m_layer + m_shape.layers;
}

double ReusePolicy::keepValue(int key) const
{
    const int layer = key / m_shape.experts;
    const bool ahead = layer > m_layer;
    const int g = gapIndex(key, ahead ? m_pass : m_pass + 1);
    const double first = std::min(0.999, chance(key, g, prediction(key, ahead), m_estimate));
    // Hit density over the next H chances, the best H: P(picked at one of them) / expected
    // passes held. The first chance comes in d/L passes, the later ones a pass apart, at
    // the hazard of the gaps still to come (no prediction reaches that far).
    double held = double(distance(layer)) / m_shape.layers;
    double unpicked = 1.0 - first;
    double best = first / held;
    const double later = g < kGaps ? correction(key, 2, m_estimate) : 1.0;
    for (int k = 1; k < kHorizon; ++k) {
        const int gk = g >= kGaps ? kGaps : std::min(g + k, kGaps - 1);
        const double h = std::min(0.999, m_hazard[size_t(gk) * kClasses + m_class[key]] * later);
        held += unpicked;
        unpicked *= 1.0 - h;
        best = std::max(best, (1.0 - unpicked) / held);
    }
    return best;
}

void ReusePolicy::rerank(int layer)
{
    auto &set = m_byLayer[layer];
    auto &slots = m_scratch;
    slots.clear();
    for (const auto &entry : set)
        slots.push_back(entry.second);
    set.clear();
    for (int slot : slots) {
        m_slotValue[slot] = keepValue(m_slotKey[slot]);
        set.insert({m_slotValue[slot], slot});
    }
    m_stale[layer] = 0;
    m_rankedAhead[layer] = layer > m_layer;
    m_rankedDistance[layer] = distance(layer);
    m_frontSlot[layer] = -1;
}

int ReusePolicy::victim()
{
    int best = -1;
    double bestValue = std::numeric_limits<double>::infinity();
    for (int layer = 0; layer < m_shape.layers; ++layer) {
        if (m_byLayer[layer].empty())
            continue;
        const bool ahead = layer > m_layer;
        // Re-rank when its chances moved since they were filed, or its next chance came
        // twice as close (the order within a layer shifts with that distance).
        if (m_stale[layer] || bool(m_rankedAhead[layer]) != ahead || 2 * distance(layer) < m_rankedDistance[layer])
            rerank(layer);
        const int front = m_byLayer[layer].begin()->second;
        if (m_frontSlot[layer] != front || m_frontAt[layer] != m_layer) { // its value at today's distance
            m_frontSlot[layer] = front;
            m_frontAt[layer] = m_layer;
            m_frontValue[layer] = keepValue(m_slotKey[front]);
        }
        if (m_frontValue[layer] < bestValue) {
            bestValue = m_frontValue[layer];
            best = front;
        }
    }
    return best;
}

} // namespace waste::cache
