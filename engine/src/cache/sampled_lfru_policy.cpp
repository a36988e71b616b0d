#include "cache/sampled_lfru_policy.hpp"

namespace waste::cache {

SampledLfruPolicy::SampledLfruPolicy(const PolicyShape &shape)
    : m_hits(shape.slots, 0), m_last(shape.slots, 0), m_evictable(shape.slots, 0)
{
}

uint64_t SampledLfruPolicy::nextRandom()
{
    // xorshift64*: cheap and good enough to pick sample slots.
    m_rng ^= m_rng >> 12;
    m_rng ^= m_rng << 25;
    m_rng ^= m_rng >> 27;
    return m_rng * 0x2545F4914F6CDD1Dull;
}

void SampledLfruPolicy::filled(int slot, int, bool)
{
    m_hits[slot] = 1;
    m_last[slot] = ++m_clock;
}

void SampledLfruPolicy::used(int slot, int)
{
    ++m_hits[slot];
    m_last[slot] = ++m_clock;
}

void SampledLfruPolicy::setEvictable(int slot, bool evictable)
{
    if (bool(m_evictable[slot]) == evictable)
        return;
    m_evictable[slot] = evictable;
    m_evictableCount += evictable ? 1 : -1;
}

int SampledLfruPolicy::victim()
{
    if (m_evictableCount == 0)
        return -1;
    const int n = int(m_hits.size());
    int best = -1;
    for (int i = 0; i < kSample; ++i) {
        int s = int(nextRandom() % uint64_t(n));
        if (!m_evictable[s])
            continue;
        if (best < 0 || m_hits[s] < m_hits[best] || (m_hits[s] == m_hits[best] && m_last[s] < m_last[best]))
            best = s;
    }
    if (best >= 0)
        return best;
    for (int s = 0; s < n; ++s) // every sample was pinned: take the first evictable one
        if (m_evictable[s])
            return s;
    return -1;
}

} // namespace waste::cache
