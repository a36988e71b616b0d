#include "cache/belady.hpp"
#include "cache/access_order.hpp"

#include <set>
#include <utility>
#include <vector>

namespace waste::cache {

int64_t beladyHits(const RoutingTrace &trace, int slots, std::span<const std::pair<int, int>> resident)
{
    const int E = trace.experts;
    const AccessOrder order = accessOrder(trace);
    const std::vector<int> &seq = order.keys;
    const std::vector<int64_t> &nextUse = order.nextUse;
    const std::vector<int64_t> &firstUse = order.firstUse;
    const int64_t n = int64_t(seq.size());

    // Resident records ordered by next use; `at` remembers each one's entry.
    std::set<std::pair<int64_t, int>> byNext;
    std::vector<int64_t> at(firstUse.size(), -1);
    std::vector<char> in(firstUse.size(), 0);
    for (auto [layer, expert] : resident) { // a preloaded record is next used at its first use
        if (layer < 0 || layer >= trace.layers || expert < 0 || expert >= E)
            continue;
        const int k = layer * E + expert;
        if (in[k] || int64_t(byNext.size()) >= slots)
            continue;
        in[k] = 1;
        at[k] = firstUse[k];
        byNext.insert({at[k], k});
    }
    int64_t hits = 0;
    for (int64_t i = 0; i < n; ++i) {
        const int k = seq[i];
        if (in[k]) {
            ++hits;
            byNext.erase({at[k], k});
        } else if (int64_t(byNext.size()) >= slots) {
            auto last = std::prev(byNext.end());
            in[last->second] = 0;
            byNext.erase(last);
        }
        if (slots > 0) {
            in[k] = 1;
            at[k] = nextUse[i];
            byNext.insert({at[k], k});
        }
    }
    return hits;
}

} // namespace waste::cache
