// Expert selection from the routing keys (sigmoid score + correction bias): plain top-k,
// or DeepSeek-V3's group-limited top-k (noaux_tc; docs/architectures/deepseek-v3.md): the
// experts are split into `groups` runs of equal length, a group scores the sum of its two
// largest keys, and only the `topkGroups` best groups may be chosen. Ties go to the lower
// group and the lower expert id, so the choice is a pure function of the keys.
#pragma once

#include <cstdint>

namespace waste::model {

// Writes the K chosen expert ids to `chosen`, best first. groups <= 1: plain top-k.
void selectExperts(const float *key, int64_t E, int64_t K, int groups, int topkGroups, int *chosen);

// Sets the keys of the experts outside the topkGroups best groups to -infinity (the
// router lookahead ranks the rest); nothing when routing is not grouped.
void keepBestGroups(float *key, int64_t E, int groups, int topkGroups);

} // namespace waste::model
