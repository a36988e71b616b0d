// The reference engine's policy, kept for comparison: sample 16 slots, evict the one with
// the fewest hits since it was filled (ties: least recently used). Frequency is forgotten
// on eviction, so a hot expert that falls out starts again from one hit.
#pragma once

#include "cache/eviction_policy.hpp"

namespace waste::cache {

class SampledLfruPolicy final : public EvictionPolicy {
public:
    explicit SampledLfruPolicy(const PolicyShape &shape);
    void beginToken() override {}
    void atLayer(int) override {}
    void filled(int slot, int key, bool demand) override;
    void used(int slot, int key) override;
    void setEvictable(int slot, bool evictable) override;
    int victim() override;
    void seedUses(int, double) override {}

private:
    uint64_t nextRandom();
    static constexpr int kSample = 16;
    std::vector<uint32_t> m_hits;
    std::vector<uint64_t> m_last;
    std::vector<char> m_evictable;
    int m_evictableCount = 0;
    uint64_t m_clock = 0;
    uint64_t m_rng = 0x9E3779B97F4A7C15ull; // fixed seed: replays are reproducible
};

} // namespace waste::cache
