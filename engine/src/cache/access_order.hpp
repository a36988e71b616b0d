// A routing trace in the order the offline caches (Belady's optimum, the next-pass yardstick)
// replay it: one access per listed expert, token by token, layer by layer, each with the
// record it touches and where that record is used next.
#pragma once

#include "cache/routing_trace.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace waste::cache {

struct AccessOrder {
    static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
    std::vector<int> keys;          // per access: layer * experts + expert
    std::vector<int64_t> pass;      // per access: its token
    std::vector<int64_t> nextUse;   // per access: the next access to the same record, kNever none
    std::vector<int64_t> passStart; // per token, and one past the last: its first access
    std::vector<int64_t> firstUse;  // per record: its first access, kNever none
};

AccessOrder accessOrder(const RoutingTrace &trace);

} // namespace waste::cache
