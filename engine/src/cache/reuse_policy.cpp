#include "cache/reuse_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace waste::cache {

namespace {
// Gap buckets of the per-record correction: picked right after a use, one pass later, later.
int recordBucket(int gapIndex) { return gapIndex < 2 ? gapIndex : 2; }
} // namespace

ReusePolicy::ReusePolicy(const PolicyShape &shape)
    : m_shape(shape),
      m_lastUse(size_t(shape.layers) * size_t(shape.experts), -1),
      m_count(m_lastUse.size(), 0.0f),
      m_class(m_lastUse.size(), 0),
      m_picked(m_lastUse.size() * 3, 0.0f),
      m_expected(m_lastUse.size() * 3, 0.0f),
      m_hits(size_t(kGaps + 1) * kClasses, 0.0),
      m_trials(m_hits.size(), 0.0),
      m_hazard(m_hits.size(), 0.0),
      m_slotKey(shape.slots, -1),
      m_evictable(shape.slots, 0),
      m_slotChance(shape.slots, 0.0),
      m_byLayer(shape.layers),
      m_stale(shape.layers, 1),
      m_rankedAhead(shape.layers, 0),
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
    if (m_lastUse[key] < 0)
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
}

void ReusePolicy::beginToken()
{
    ++m_pass;
    m_layer = -1;
    for (size_t i = 0; i < m_hits.size(); ++i) {
        m_hits[i] *= kTableKeep;
        m_trials[i] *= kTableKeep;
    }
    refreshHazard();
    std::fill(m_stale.begin(), m_stale.end(), 1);
}

void ReusePolicy::recordUse(int key)
{
    if (m_lastUse[key] == m_pass)
        return; // several uses in one pass (a prefill chunk) count once
    const double aged = m_lastUse[key] < 0
                            ? 0.0
                            : double(m_count[key]) * std::exp2(-double(m_pass - m_lastUse[key]) / kCountHalfLife);
    m_count[key] = float(aged + 1.0);
    m_class[key] = uint8_t(classOf(aged + 1.0));
    m_lastUse[key] = m_pass;
}

void ReusePolicy::layerDemand(int layer, std::span<const int> experts)
{
    if (layer < 0 || layer >= m_shape.layers)
        return;
    m_layer = layer;
    const int E = m_shape.experts;
    for (int e : experts)
        if (e >= 0 && e < E)
            m_pickedNow[e] = 1;
    // Every expert of the layer had its chance now: learn from all of them.
    for (int e = 0; e < E; ++e) {
        const int key = layer * E + e;
        if (m_lastUse[key] == m_pass)
            continue; // already seen in this pass
        const int g = gapIndex(key, m_pass);
        const size_t cell = size_t(g) * kClasses + m_class[key];
        const double picked = m_pickedNow[e];
        m_trials[cell] += 1.0;
        m_hits[cell] += picked;
        if (g < kGaps) {
            const size_t r = size_t(key) * 3 + recordBucket(g);
            m_picked[r] = float(m_picked[r] * kRecordKeep + picked);
            m_expected[r] = float(m_expected[r] * kRecordKeep + m_hazard[cell]);
        }
    }
    for (int e : experts)
        if (e >= 0 && e < E) {
            m_pickedNow[e] = 0;
            recordUse(layer * E + e);
        }
    m_stale[layer] = 1; // every record of the layer has a new chance now
}

void ReusePolicy::unlink(int slot)
{
    if (m_evictable[slot] && m_slotKey[slot] >= 0)
        m_byLayer[m_slotKey[slot] / m_shape.experts].erase({m_slotChance[slot], slot});
}

void ReusePolicy::link(int slot)
{
    if (!m_evictable[slot] || m_slotKey[slot] < 0)
        return;
    m_slotChance[slot] = nextUseChance(m_slotKey[slot]);
    m_byLayer[m_slotKey[slot] / m_shape.experts].insert({m_slotChance[slot], slot});
}

void ReusePolicy::filled(int slot, int key, bool demand)
{
    unlink(slot);
    if (demand)
        recordUse(key);
    m_slotKey[slot] = key;
    link(slot);
}

void ReusePolicy::used(int slot, int key)
{
    unlink(slot);
    recordUse(key);
    m_slotKey[slot] = key;
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
    m_lastUse[key] = m_pass - 1; // as if used in the pass just before this run
}

double ReusePolicy::nextUseChance(int key) const
{
    const int layer = key / m_shape.experts;
    const int64_t next = layer > m_layer ? m_pass : m_pass + 1;
    const int g = gapIndex(key, next);
    double p = m_hazard[size_t(g) * kClasses + m_class[key]];
    if (g < kGaps) {
        const size_t r = size_t(key) * 3 + recordBucket(g);
        p *= (double(m_picked[r]) + kRecordPrior) / (double(m_expected[r]) + kRecordPrior);
    }
    return p;
}

void ReusePolicy::rerank(int layer)
{
    auto &set = m_byLayer[layer];
    std::vector<int> slots;
    slots.reserve(set.size());
    for (const auto &entry : set)
        slots.push_back(entry.second);
    set.clear();
    for (int slot : slots) {
        m_slotChance[slot] = nextUseChance(m_slotKey[slot]);
        set.insert({m_slotChance[slot], slot});
    }
    m_stale[layer] = 0;
    m_rankedAhead[layer] = layer > m_layer;
}

int ReusePolicy::victim()
{
    const int L = m_shape.layers;
    int best = -1;
    double bestScore = std::numeric_limits<double>::infinity();
    for (int layer = 0; layer < L; ++layer) {
        if (m_byLayer[layer].empty())
            continue;
        const bool ahead = layer > m_layer;
        if (m_stale[layer] || bool(m_rankedAhead[layer]) != ahead)
            rerank(layer); // its chances moved since they were filed
        const int d = ahead ? layer - m_layer : layer - m_layer + L; // layers until its next chance
        const double score = m_byLayer[layer].begin()->first / (1.0 + double(d) / L);
        if (score < bestScore) {
            bestScore = score;
            best = m_byLayer[layer].begin()->second;
        }
    }
    return best;
}

} // namespace waste::cache
