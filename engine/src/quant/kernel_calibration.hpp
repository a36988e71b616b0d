// The kernel half of waste::calibrateCompute: the engine's own kernels timed at a few
// sizes each (the decode scale is measured above them, in plan/decode_scale, and a prompt
// pass's parts that are no kernel of this folder in plan/pass_calibration).
#pragma once

#include <waste/calibration.hpp>

#include <functional>

namespace waste {

ComputeCalibration calibrateKernels(int threads);

// Mean seconds of `fn` over enough calls to fill ~`target` seconds (at least 3, at most
// 2000), after one call that warms the caches and wakes the pool's threads.
double meanSeconds(const std::function<void()> &fn, double target = 0.04);

} // namespace waste
