// The kernel half of waste::calibrateCompute: the engine's own kernels timed at a few
// sizes each (the decode scale is measured above them, in plan/decode_scale).
#pragma once

#include <waste/calibration.hpp>

namespace waste {

ComputeCalibration calibrateKernels(int threads);

} // namespace waste
