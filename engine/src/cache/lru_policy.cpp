#include "cache/lru_policy.hpp"

namespace waste::cache {

LruPolicy::LruPolicy(const PolicyShape &shape) : m_last(shape.slots, 0), m_evictable(shape.slots, 0) {}

void LruPolicy::stamp(int slot)
{
    if (m_evictable[slot])
        m_order.erase({m_last[slot], slot});
    m_last[slot] = ++m_clock;
    if (m_evictable[slot])
        m_order.insert({m_last[slot], slot});
}

void LruPolicy::filled(int slot, int, bool) { stamp(slot); }
void LruPolicy::used(int slot, int) { stamp(slot); }

void LruPolicy::setEvictable(int slot, bool evictable)
{
    if (bool(m_evictable[slot]) == evictable)
        return;
    m_evictable[slot] = evictable;
    if (evictable)
        m_order.insert({m_last[slot], slot});
    else
        m_order.erase({m_last[slot], slot});
}

int LruPolicy::victim() { return m_order.empty() ? -1 : m_order.begin()->second; }

} // namespace waste::cache
