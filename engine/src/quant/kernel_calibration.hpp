// The kernel half of waste::calibrateCompute: the engine's own kernels timed at a few
// sizes each (the decode scale is measured above them, in plan/decode_scale, and a prompt
// pass's parts that are no kernel of this folder in plan/pass_calibration).
#pragma once

#include <waste/calibration.hpp>

#include <functional>

namespace waste {

ComputeCalibration calibrateKernels(int threads);

// Seconds of one call of `fn`: the fastest of five windows' means, the windows together
// filling ~`target` seconds (each at least one call, at most 400), after one call that warms
// the caches and wakes the pool's threads.
double typicalSeconds(const std::function<void()> &fn, double target = 0.04);

} // namespace waste
