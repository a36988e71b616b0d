// The parts of a prompt's pass that are no matrix product of quant/, timed on this machine
// for the prompt forecast (waste::estimatePrefill): the blocked causal attention, the linear
// attention's steps token by token, and the vector work a pass does per token around its
// products. Part of waste::calibrateCompute, after quant/kernel_calibration's kernels.
#pragma once

#include <waste/calibration.hpp>

namespace waste::plan {

// Appends "ATTN-score", "VEC-token" and "KDA-token" timings to c (waste/calibration.hpp
// names their units), on a pool of `threads` compute threads (0: one per hardware thread).
void timePassParts(ComputeCalibration &c, int threads);

} // namespace waste::plan
