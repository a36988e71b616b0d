// One KDA head's tokens (Kimi Delta Attention, docs/architectures/ and shared/reference/): the
// three short convolutions over a run of its tokens (kdaHeadConvolve), then per token the
// per-channel decay gate, beta, the L2 norms, the delta-rule step on the head's D × D state and
// the gated output norm (kdaHeadConvolved). Forward::kda runs them for every (sequence, head)
// of a layer, tokens in order, a decode step as a run of one; the compute calibration runs the
// same code to time a token's share of a prompt pass ("KDA-token", plan/pass_calibration), so
// what the forecast times is what a pass runs.
#pragma once

#include "model/delta_rule.hpp"
#include "model/ops.hpp"
#include "model/short_conv.hpp"

#include <cstdint>

namespace waste::model {

// What stays fixed over a head's tokens: its weights, rings and state block.
struct KdaHead {
    int64_t D = 0; // head dim
    int K = 0;     // convolution taps
    const float *qTaps = nullptr, *kTaps = nullptr, *vTaps = nullptr; // D × K each
    float *qRing = nullptr, *kRing = nullptr, *vRing = nullptr;       // D × (K − 1) each, updated
    float *S = nullptr;                                               // D × D state, updated
    const float *dtBias = nullptr;                                    // D: this head's decay bias
    float A = 0.0f;                                                   // exp(A_log) of this head
    float gateLowerBound = 0.0f; // < 0: the bounded sigmoid gate; otherwise −A · softplus
    float qScale = 0.0f;         // 1 / sqrt(D)
    const float *oNorm = nullptr; // D: the shared output norm weight
    float eps = 0.0f;
    quant::DeltaRuleStep step = nullptr;
};

// The three short convolutions of a run of the head's tokens, in order: row t's q, k and v
// at q + t * stride (and k, v likewise), convolved in place.
inline void kdaHeadConvolve(const KdaHead &h, float *q, float *k, float *v, int64_t stride, int64_t tokens)
{
    shortConvRows(q, stride, tokens, h.qTaps, h.qRing, h.D, h.K);
    shortConvRows(k, stride, tokens, h.kTaps, h.kRing, h.D, h.K);
    shortConvRows(v, stride, tokens, h.vTaps, h.vRing, h.D, h.K);
}

// The rest of a token once its q, k, v (D each) are convolved: f: the decay gate's
// projection, replaced by the log decay; betaLogit: beta before its sigmoid; gate: the
// output gate's projection; decay, u: D floats of scratch; o: the head's output (D).
inline void kdaHeadConvolved(const KdaHead &h, float *q, float *k, const float *v, float *f, float betaLogit,
                             const float *gate, float *decay, float *u, float *o)
{
    const int64_t D = h.D;
    // Decay gate in log space, per channel: lower · σ(A (f + dt)) with a lower bound,
    // −A · softplus(f + dt) without; then beta.
    if (h.gateLowerBound < 0.0f) {
        for (int64_t j = 0; j < D; ++j)
            f[j] = h.A * (f[j] + h.dtBias[j]);
        sigmoidRun(f, f, D);
        for (int64_t j = 0; j < D; ++j)
            f[j] = h.gateLowerBound * f[j];
    } else {
        for (int64_t j = 0; j < D; ++j)
            f[j] = f[j] + h.dtBias[j];
        softplusRun(f, f, D);
        for (int64_t j = 0; j < D; ++j)
            f[j] = -h.A * f[j];
    }
    const float bt = sigmoid(betaLogit);
    l2NormalizeHead(q, D, 1e-12f, h.qScale);
    l2NormalizeHead(k, D, 1e-12f, 1.0f);
    quant::expRun(f, decay, D);
    h.step(h.S, q, k, v, decay, bt, u, o, D, D);
    // Gated RMSNorm of the head (shared o_norm weight); the decay's room holds the gate.
    rmsNorm(o, h.oNorm, o, D, h.eps);
    sigmoidRun(gate, decay, D);
    for (int64_t j = 0; j < D; ++j)
        o[j] *= decay[j];
}

} // namespace waste::model
