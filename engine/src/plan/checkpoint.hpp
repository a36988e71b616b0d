// The size of one state checkpoint (waste/prefix.hpp). The plan carries it
// (MemoryPlan::checkpoint_bytes); where a budget keeps it is resolveBudget's rule
// (waste::expertCacheAt, plan/budget.cpp).
#pragma once

#include "plan/plan_inputs.hpp"

#include <cstdint>

namespace waste::plan {

// What session/read_history copies at a context of `ctx` positions: per linear-attention
// layer its state matrices and conv rings, per sliding-window layer its K/V ring, and one
// row of logits (f32).
int64_t checkpointBytes(const PlanInputs &in, int64_t ctx);

} // namespace waste::plan
