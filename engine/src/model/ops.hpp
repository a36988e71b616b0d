// Elementwise operations of the forward pass, all in f32 as the specification states.
#pragma once

#include "quant/exp_run.hpp"
#include "quant/log1p_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace waste::model {

inline float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }
inline float silu(float z) { return z * sigmoid(z); }
inline float softplus(float z) { return z > 20.0f ? z : std::log1p(std::exp(z)); }

// The same over runs of values, e^x taken several at a time (quant/exp_run.hpp): each result
// is the one-value function's bit for bit. y may be x (and g or u, for swigluRun).
namespace detail {
inline constexpr int64_t kExpChunk = 64;
// f(i, e) for each i < n, with e = exp(x[i]), or exp(−x[i]) when Negate.
template <bool Negate, typename F>
inline void withExp(const float *x, int64_t n, F f)
{
    float e[kExpChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kExpChunk) {
        const int64_t m = std::min(kExpChunk, n - i0);
        for (int64_t j = 0; j < m; ++j)
            e[j] = Negate ? -x[i0 + j] : x[i0 + j];
        quant::expRun(e, e, m);
        for (int64_t j = 0; j < m; ++j)
            f(i0 + j, e[j]);
    }
}
} // namespace detail

inline void sigmoidRun(const float *x, float *y, int64_t n)
{
    detail::withExp<true>(x, n, [&](int64_t i, float e) { y[i] = 1.0f / (1.0f + e); });
}

inline void siluRun(const float *x, float *y, int64_t n)
{
    detail::withExp<true>(x, n, [&](int64_t i, float e) { y[i] = x[i] * (1.0f / (1.0f + e)); });
}

// y = silu(g) · u, SwiGLU's gate.
inline void swigluRun(const float *g, const float *u, float *y, int64_t n)
{
    detail::withExp<true>(g, n, [&](int64_t i, float e) { y[i] = g[i] * (1.0f / (1.0f + e)) * u[i]; });
}

inline void softplusRun(const float *x, float *y, int64_t n)
{
    float e[detail::kExpChunk];
    for (int64_t i0 = 0; i0 < n; i0 += detail::kExpChunk) {
        const int64_t m = std::min(detail::kExpChunk, n - i0);
        quant::expRun(x + i0, e, m);
        quant::log1pRun(e, e, m);
        for (int64_t j = 0; j < m; ++j)
            y[i0 + j] = x[i0 + j] > 20.0f ? x[i0 + j] : e[j];
    }
}

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
