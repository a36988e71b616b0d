#include "cache/horizon_oracle.hpp"
#include "cache/access_order.hpp"

#include <set>
#include <utility>
#include <vector>

namespace waste::cache {

int64_t horizonOracleHits(const RoutingTrace &trace, int slots, int passes)
{
    const AccessOrder order = accessOrder(trace);
    const std::vector<int> &seq = order.keys;
    const std::vector<int64_t> &passOf = order.pass, &passStart = order.passStart, &nextUse = order.nextUse;
    const int64_t tokens = int64_t(trace.tokens.size());
    constexpr int64_t kNever = AccessOrder::kNever;

    // Residents whose next use lies inside the horizon, by that use; the others by last use.
    std::set<std::pair<int64_t, int>> known, unknown;
    std::vector<int64_t> next(order.firstUse.size(), kNever), last(order.firstUse.size(), -1);
    std::vector<char> in(order.firstUse.size(), 0), isKnown(order.firstUse.size(), 0);
    auto insert = [&](int k, int64_t pass) {
        isKnown[size_t(k)] = next[size_t(k)] != kNever && passOf[size_t(next[size_t(k)])] <= pass + passes;
        if (isKnown[size_t(k)])
            known.insert({next[size_t(k)], k});
        else
            unknown.insert({last[size_t(k)], k});
    };
    auto erase = [&](int k) {
        if (isKnown[size_t(k)])
            known.erase({next[size_t(k)], k});
        else
            unknown.erase({last[size_t(k)], k});
    };
    int64_t hits = 0;
    for (int64_t t = 0; t < tokens; ++t) {
        // Pass t + passes comes into view: residents next used there become known.
        const int64_t entering = t + int64_t(passes);
        if (t > 0 && entering < tokens)
            for (int64_t j = passStart[size_t(entering)]; j < passStart[size_t(entering) + 1]; ++j) {
                const int k = seq[size_t(j)];
                if (in[size_t(k)] && !isKnown[size_t(k)] && next[size_t(k)] == j) {
                    erase(k);
                    insert(k, t);
                }
            }
        for (int64_t i = passStart[size_t(t)]; i < passStart[size_t(t) + 1]; ++i) {
            const int k = seq[size_t(i)];
            if (in[size_t(k)]) {
                ++hits;
                erase(k);
            } else if (int64_t(known.size() + unknown.size()) >= slots) {
                int victim;
                if (!unknown.empty())
                    victim = unknown.begin()->second;
                else
                    victim = std::prev(known.end())->second;
                erase(victim);
                in[size_t(victim)] = 0;
            }
            if (slots > 0) {
                in[size_t(k)] = 1;
                next[size_t(k)] = nextUse[size_t(i)];
                last[size_t(k)] = i;
                insert(k, t);
            }
        }
    }
    return hits;
}

} // namespace waste::cache
