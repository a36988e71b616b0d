// gpt-oss's expert activation: the gate clamped from above and the up projection from
// both sides at `limit`, then (up + 1) · gate · σ(α · gate).
#pragma once

#include "model/ops.hpp"

#include <algorithm>
#include <cstdint>

namespace waste::model {

inline void clampedSwiglu(const float *g, const float *u, float *out, int64_t n, float alpha, float limit)
{
    for (int64_t i = 0; i < n; ++i) {
        const float gc = std::min(g[i], limit), uc = std::clamp(u[i], -limit, limit);
        out[i] = (uc + 1.0f) * (gc * sigmoid(alpha * gc));
    }
}

} // namespace waste::model
