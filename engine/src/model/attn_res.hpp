// K3's Attention-Residuals mixing function AR(R; c; wn, wp) (k3-math §2.1): a softmax
// over the stored block vectors R and the current vector c, each scored by its
// RMS-normalised self against wn ⊙ wp, then the unnormalised candidates averaged.
#pragma once

#include <cstdint>
#include <vector>

namespace waste::model {

// out (Hd floats) may alias c but not any R[i].
void attnResMix(const std::vector<std::vector<float>> &R, const float *c, const float *wn, const float *wp, float *out,
                int64_t Hd, float eps);

} // namespace waste::model
