// A warm start: what a run learned (its --learn usage record) loaded into the next run's
// cache before its first token. One rule for the engine (StreamedExpertSource::warmFrom) and
// for trace replay (cacheSim with a warm start), so what the bench measures is what opens.
#pragma once

#include "cache/expert_cache.hpp"
#include "cache/usage_record.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace waste::cache {

// The usage record of a run that ended with `resident` records (layer, expert) in its cache,
// used each record uses[layer][expert] times and last in pass lastPass[layer][expert]
// (counted from 1; 0: never): what saveUsage writes. The pass is the record's last_seen, on
// the clock the record's header gives as the run's pass count, as the reference's layout has it.
std::vector<UsageEntry> learnedEntries(std::span<const std::pair<int, int>> resident,
                                       const std::vector<std::vector<int64_t>> &uses,
                                       const std::vector<std::vector<int64_t>> &lastPass);

// Seeds the policy with every entry's uses (layers are the cache's own indices) and loads the
// most used records, at most `room` of them, through `load(entry, ref)`, which reads the
// record into ref.slot and marks it filled. No statistic counts any of it. Returns how
// many records were loaded.
int warmStart(ExpertCache &cache, std::vector<UsageEntry> entries, int64_t room,
              const std::function<void(const UsageEntry &, const ExpertCache::Ref &)> &load);

} // namespace waste::cache
