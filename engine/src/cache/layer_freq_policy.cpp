#include "cache/layer_freq_policy.hpp"

#include <cmath>
#include <limits>

namespace waste::cache {

namespace {
constexpr double kNever = -1e300; // rank of a record the router never chose
}

LayerFreqPolicy::LayerFreqPolicy(const PolicyShape &shape)
    : m_shape(shape),
      m_rank(size_t(shape.layers) * size_t(shape.experts), kNever),
      m_lastUse(size_t(shape.layers) * size_t(shape.experts), -1),
      m_slotKey(shape.slots, -1),
      m_slotRank(shape.slots, kNever),
      m_evictable(shape.slots, 0),
      m_byLayer(shape.layers),
      m_distancePenalty(shape.layers + 1)
{
    for (int d = 0; d <= shape.layers; ++d)
        m_distancePenalty[d] = std::log2(1.0 + double(d) / shape.layers);
}

void LayerFreqPolicy::bump(int key)
{
    // Several uses within one forward pass (a prefill chunk) count once: the unit of
    // reuse is the pass, which keeps prefill from inflating a record's standing.
    if (m_lastUse[key] == m_token)
        return;
    const double now = double(m_token) / kHalfLifeTokens;
    // Never-chosen is told by the rank: a record seeded at open has last use -1 (the pass
    // before the first) and must keep its seeded count.
    double aged = m_rank[key] == kNever ? 0.0 : std::exp2(m_rank[key] - now);
    m_rank[key] = std::log2(aged + 1.0) + now;
    m_lastUse[key] = m_token;
}

void LayerFreqPolicy::seedUses(int key, double uses)
{
    if (uses <= 0)
        return;
    m_rank[key] = std::log2(uses) + double(m_token) / kHalfLifeTokens;
    m_lastUse[key] = m_token - 1; // as if used just before this run started
}

void LayerFreqPolicy::unlink(int slot)
{
    if (m_evictable[slot] && m_slotKey[slot] >= 0)
        m_byLayer[m_slotKey[slot] / m_shape.experts].erase({m_slotRank[slot], slot});
}

void LayerFreqPolicy::link(int slot)
{
    if (m_evictable[slot] && m_slotKey[slot] >= 0)
        m_byLayer[m_slotKey[slot] / m_shape.experts].insert({m_slotRank[slot], slot});
}

void LayerFreqPolicy::place(int slot, int key)
{
    unlink(slot);
    m_slotKey[slot] = key;
    m_slotRank[slot] = m_rank[key];
    link(slot);
}

void LayerFreqPolicy::filled(int slot, int key, bool demand)
{
    if (demand)
        bump(key);
    place(slot, key);
}

void LayerFreqPolicy::used(int slot, int key)
{
    bump(key);
    place(slot, key);
}

void LayerFreqPolicy::setEvictable(int slot, bool evictable)
{
    if (bool(m_evictable[slot]) == evictable)
        return;
    unlink(slot);
    m_evictable[slot] = evictable;
    link(slot);
}

int LayerFreqPolicy::victim()
{
    const int L = m_shape.layers;
    int best = -1;
    double bestRank = std::numeric_limits<double>::infinity();
    for (int layer = 0; layer < L; ++layer) {
        const auto &set = m_byLayer[layer];
        if (set.empty())
            continue;
        int d = ((layer - m_layer) % L + L) % L;
        if (d == 0)
            d = L; // the current layer comes back only after a full cycle
        double r = set.begin()->first - m_distancePenalty[d];
        if (r < bestRank) {
            bestRank = r;
            best = set.begin()->second;
        }
    }
    return best;
}

} // namespace waste::cache
