// The state checkpoint's share of a budget (waste/prefix.hpp): how many bytes one
// checkpoint holds, and the rule that decides whether a budget keeps one. The engine opens
// by this rule (session/model_impl.cpp) and the forecast prices the expert cache by it
// (plan/forecast.cpp), so a plan's cache slots are the ones the engine will have.
#pragma once

#include "plan/plan_inputs.hpp"

#include <cstdint>

namespace waste::plan {

// What session/read_history copies: per linear-attention layer the S matrices and three
// conv rings, and one row of logits (f32).
int64_t checkpointBytes(const PlanInputs &in);

// A budget its caller chose pays for the checkpoint from its expert cache when the cache
// stays at least `minCache` (two layers' records) after it; else no checkpoint is kept and
// the cache is whole. (The engine's own default budget instead grows by the checkpoint.)
struct CheckpointShare {
    int64_t cacheBytes = 0; // the expert cache left
    bool kept = false;
};
CheckpointShare shareWithCheckpoint(int64_t cacheBytes, int64_t minCache, int64_t checkpoint);

} // namespace waste::plan
