// Compute time per decoded token from plan inputs and a calibration (the public
// waste::estimateComputePerToken reads the inputs from a container; config planning
// builds them from a release's config.json).
#pragma once

#include <waste/calibration.hpp>

namespace waste::plan {

struct PlanInputs;

ComputeEstimate estimateCompute(const PlanInputs &in, const ComputeCalibration &c);

} // namespace waste::plan
