// The RAM floor and the recommended budget, from the manifest's numbers alone
// (reference waste_plan_memory; ARCHITECTURE.md §5).
#pragma once

#include "plan/plan_inputs.hpp"

#include <waste/waste.hpp>

namespace waste::plan {

struct FloorTerms {
    int64_t trunk = 0, state = 0, scratch = 0, minExpertCache = 0, vision = 0;
    int64_t passScratch = 0; // of scratch: what only a 64-token prompt chunk needs
    int64_t workingSet = 0; // record bytes x top-k x layers (all layers, as the reference counts)
    int64_t floor() const { return trunk + state + scratch + minExpertCache; }
    int64_t recommended() const { return floor() + 3 * workingSet; }
};

FloorTerms computeFloor(const PlanInputs &in, int64_t ctxTokens);
// The reservation for images (weights outside the text prefix plus working buffers);
// 0 when the container has no tensor outside its prefix.
int64_t visionBytes(const PlanInputs &in);

} // namespace waste::plan
