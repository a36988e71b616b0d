// The per-head pieces KDA and Gated DeltaNet share: the L2 normalisation of a head's q
// or k and the runs of tokens a pass splits by state here, and one token of the gated delta rule on the head's state (quant/delta_rule.hpp,
// at the best SIMD level, bit for bit the scalar order). They differ only in what they feed
// in (the epsilon, the decay per channel or per head), so each keeps its own values at the
// call site and the arithmetic stays one code path.
#pragma once

#include "model/state.hpp"
#include "quant/delta_rule.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

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

// Where each run of tokens sharing a state starts (tokens of one sequence are adjacent), then
// n: a pass splits its recurrence over (run, head), a head's tokens in order.
inline std::vector<int> stateRuns(LayerState *const *st, int n)
{
    std::vector<int> starts;
    for (int t = 0; t < n; ++t)
        if (t == 0 || st[t] != st[t - 1])
            starts.push_back(t);
    starts.push_back(n);
    return starts;
}

} // namespace waste::model
