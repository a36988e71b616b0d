#include "cache/warm_start.hpp"

#include <algorithm>
#include <climits>

namespace waste::cache {

std::vector<UsageEntry> learnedEntries(std::span<const std::pair<int, int>> resident,
                                       const std::vector<std::vector<int64_t>> &uses,
                                       const std::vector<std::vector<int64_t>> &lastPass)
{
    std::vector<UsageEntry> entries;
    entries.reserve(resident.size());
    for (auto [layer, expert] : resident) {
        UsageEntry u;
        u.layer = layer;
        u.expert = expert;
        u.hits = uint32_t(std::min<int64_t>(uses[size_t(layer)][size_t(expert)], UINT32_MAX));
        u.lastSeen = uint32_t(std::min<int64_t>(lastPass[size_t(layer)][size_t(expert)], UINT32_MAX));
        entries.push_back(u);
    }
    return entries;
}

int warmStart(ExpertCache &cache, std::vector<UsageEntry> entries, int64_t room,
              const std::function<void(const UsageEntry &, const ExpertCache::Ref &)> &load)
{
    // Most used first; ties in a fixed order, so a warm start is the same every time.
    std::sort(entries.begin(), entries.end(), [](const UsageEntry &a, const UsageEntry &b) {
        if (a.hits != b.hits)
            return a.hits > b.hits;
        return a.layer != b.layer ? a.layer < b.layer : a.expert < b.expert;
    });
    int loaded = 0;
    for (const UsageEntry &u : entries) {
        cache.seedUses(u.layer, u.expert, double(u.hits));
        if (loaded >= room)
            continue;
        const ExpertCache::Ref ref = cache.prefetch(u.layer, u.expert, false);
        if (ref.slot < 0)
            continue;
        load(u, ref);
        ++loaded;
    }
    cache.releaseSpeculative();
    cache.resetStats();
    return loaded;
}

} // namespace waste::cache
