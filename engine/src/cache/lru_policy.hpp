// Least recently used: the baseline every other policy is compared with.
#pragma once

#include "cache/eviction_policy.hpp"

#include <set>
#include <utility>

namespace waste::cache {

class LruPolicy final : public EvictionPolicy {
public:
    explicit LruPolicy(const PolicyShape &shape);
    void beginToken() override {}
    void atLayer(int) override {}
    void filled(int slot, int key, bool demand) override;
    void used(int slot, int key) override;
    void setEvictable(int slot, bool evictable) override;
    int victim() override;
    void seedUses(int, double) override {}

private:
    void stamp(int slot);
    std::vector<uint64_t> m_last;     // per slot: access clock
    std::vector<char> m_evictable;
    std::set<std::pair<uint64_t, int>> m_order; // evictable slots by last access
    uint64_t m_clock = 0;
};

} // namespace waste::cache
