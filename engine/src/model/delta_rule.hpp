// The per-head pieces KDA and Gated DeltaNet share: the L2 normalisation of a head's q
// or k, and one token of the gated delta rule on the head's state. They differ only in
// what they feed in (the epsilon, the decay per channel or per head), so each keeps its
// own values at the call site and the arithmetic stays one code path.
#pragma once

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

// One token on S (Dk rows × Dv columns, row = key dim):
//   S ← diag(decay) S;  u = Sᵀk;  δ = β (v − u);  S ← S + k δᵀ;  o = Sᵀq.
// decay: Dk factors (already exp'd); u: Dv scratch; o: Dv outputs.
inline void deltaRuleStep(float *S, const float *q, const float *k, const float *v, const float *decay, float beta,
                          float *u, float *o, int64_t Dk, int64_t Dv)
{
    for (int64_t j = 0; j < Dv; ++j)
        u[j] = 0.0f;
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv;
        const float di = decay[i], ki = k[i];
        for (int64_t j = 0; j < Dv; ++j) {
            row[j] *= di;
            u[j] += row[j] * ki;
        }
    }
    for (int64_t j = 0; j < Dv; ++j)
        u[j] = beta * (v[j] - u[j]);
    for (int64_t j = 0; j < Dv; ++j)
        o[j] = 0.0f;
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv;
        const float ki = k[i], qi = q[i];
        for (int64_t j = 0; j < Dv; ++j) {
            row[j] += ki * u[j];
            o[j] += row[j] * qi;
        }
    }
}

} // namespace waste::model
