#include "cache/belady.hpp"

#include <limits>
#include <set>
#include <utility>
#include <vector>

namespace waste::cache {

int64_t beladyHits(const RoutingTrace &trace, int slots, std::span<const std::pair<int, int>> resident)
{
    const int E = trace.experts;
    std::vector<int> seq;
    seq.reserve(size_t(trace.accesses()));
    for (const auto &tok : trace.tokens)
        for (size_t l = 0; l < tok.size(); ++l)
            for (int e : tok[l])
                seq.push_back(int(l) * E + e);

    const int64_t n = int64_t(seq.size());
    constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> nextUse(seq.size());
    std::vector<int64_t> upcoming(size_t(trace.layers) * size_t(E), kNever);
    for (int64_t i = n - 1; i >= 0; --i) {
        nextUse[i] = upcoming[seq[i]];
        upcoming[seq[i]] = i;
    }

    // Resident records ordered by next use; `at` remembers each one's entry.
    std::set<std::pair<int64_t, int>> byNext;
    std::vector<int64_t> at(upcoming.size(), -1);
    std::vector<char> in(upcoming.size(), 0);
    for (auto [layer, expert] : resident) { // upcoming[] now holds each record's first use
        if (layer < 0 || layer >= trace.layers || expert < 0 || expert >= E)
            continue;
        const int k = layer * E + expert;
        if (in[k] || int64_t(byNext.size()) >= slots)
            continue;
        in[k] = 1;
        at[k] = upcoming[k];
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
