// The RAM floor and the recommended budget, from the manifest's numbers alone
// (reference waste_plan_memory; ARCHITECTURE.md §5).
#pragma once

#include "plan/plan_inputs.hpp"

#include <waste/waste.hpp>

namespace waste::plan {

struct FloorTerms {
    int64_t trunk = 0, state = 0, scratch = 0, minExpertCache = 0, vision = 0;
    int64_t passScratch = 0; // of scratch: what only a 64-token prompt chunk needs
    int64_t workingSet = 0; // record bytes x top-k x MoE layers (what one token reads)
    // The default budget's quantum, the reference's "working set": records x top-k x every
    // layer, dense ones included. Kept so recommended_bytes stays the reference's figure
    // byte for byte (the memory contract); it exceeds workingSet by the dense layers' share.
    int64_t budgetStep = 0;
    int64_t floor() const { return trunk + state + scratch + minExpertCache; }
    int64_t recommended() const { return floor() + 3 * budgetStep; }
};

FloorTerms computeFloor(const PlanInputs &in, int64_t ctxTokens);
// The reservation for images (weights outside the text prefix plus working buffers);
// 0 when the container has no tensor outside its prefix.
int64_t visionBytes(const PlanInputs &in);

} // namespace waste::plan
