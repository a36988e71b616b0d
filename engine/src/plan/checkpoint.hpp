// The size of one state checkpoint (waste/prefix.hpp). The plan carries it
// (MemoryPlan::checkpoint_bytes); where a budget keeps it is resolveBudget's rule
// (waste::expertCacheAt, plan/budget.cpp).
#pragma once

#include "plan/plan_inputs.hpp"

#include <cstdint>

namespace waste::plan {

// What session/read_history copies: per linear-attention layer the S matrices and three
// conv rings, and one row of logits (f32).
int64_t checkpointBytes(const PlanInputs &in);

} // namespace waste::plan
