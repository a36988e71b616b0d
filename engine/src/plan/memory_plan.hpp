// The plan from plan inputs and this machine (planMemory reads the inputs from a
// container's manifest; release planning builds them from a config.json).
#pragma once

#include "plan/plan_inputs.hpp"

#include <waste/waste.hpp>

namespace waste::plan {

MemoryPlan planFromInputs(const PlanInputs &in, int ctxTokens);

} // namespace waste::plan
