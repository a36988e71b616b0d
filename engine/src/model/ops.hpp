// Elementwise operations of the forward pass, all in f32 as the specification states.
#pragma once

#include <cmath>
#include <cstdint>

namespace waste::model {

inline float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }
inline float silu(float z) { return z * sigmoid(z); }
inline float softplus(float z) { return z > 20.0f ? z : std::log1p(std::exp(z)); }

// y_i = x_i * r * w_i with r = 1/sqrt(Σx²/n + eps). y may alias x.
inline void rmsNorm(const float *x, const float *w, float *y, int64_t n, float eps)
{
    float ss = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        ss += x[i] * x[i];
    const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
    for (int64_t i = 0; i < n; ++i)
        y[i] = x[i] * r * w[i];
}

} // namespace waste::model
