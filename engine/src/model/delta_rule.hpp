// The per-head pieces KDA and Gated DeltaNet share: the L2 normalisation of a head's q
// or k here, and one token of the gated delta rule on the head's state (quant/delta_rule.hpp,
// at the best SIMD level, bit for bit the scalar order). They differ only in what they feed
// in (the epsilon, the decay per channel or per head), so each keeps its own values at the
// call site and the arithmetic stays one code path.
#pragma once

#include "quant/delta_rule.hpp"

#include <cmath>
#include <cstdint>

namespace waste::model {

// x ← x · scale / sqrt(Σx² + eps), n values.
inline void l2NormalizeHead(float *x, int64_t n, float eps, float scale)
{
    float ss = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        ss += x[i] * x[i];
    const float r = 1.0f / std::sqrt(ss + eps);
    for (int64_t i = 0; i < n; ++i)
        x[i] = x[i] * r * scale;
}

} // namespace waste::model
