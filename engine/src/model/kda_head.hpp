// One KDA head's tokens (Kimi Delta Attention, docs/architectures/ and shared/reference/): the
// three short convolutions over a run of its tokens (kdaHeadConvolve), then the per-channel
// decay gate, beta, the L2 norms, the delta-rule step on the head's D × D state and the gated
// output norm (kdaHeadTokens). Forward::kda runs them for every (sequence, head) of a layer,
// tokens in order, a decode step as a run of one; the compute calibration runs the
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

// Each row's sum of squares in index order (a one-row loop's sum, bit for bit), eight rows side
// by side: one row's adds each wait on the one before, eight rows' do not.
inline void rowSquareSums(const float *x, int64_t stride, int rows, int64_t n, float *out)
{
    int r = 0;
    for (; r + 8 <= rows; r += 8) {
        float acc[8] = {};
        for (int64_t i = 0; i < n; ++i)
            for (int j = 0; j < 8; ++j) {
                const float v = x[(r + j) * stride + i];
                acc[j] += v * v;
            }
        for (int j = 0; j < 8; ++j)
            out[r + j] = acc[j];
    }
    for (; r < rows; ++r) {
        float ss = 0.0f;
        for (int64_t i = 0; i < n; ++i)
            ss += x[r * stride + i] * x[r * stride + i];
        out[r] = ss;
    }
}

// Floats of scratch kdaHeadTokens takes for `tokens` tokens.
inline int64_t kdaHeadTokensScratch(int64_t D, int tokens) { return 2 * D + 2 * int64_t(tokens); }

// Where a run of a head's tokens lies: row t of q, k, v and the output o at + t * stride, of f
// (the decay gate's projection, replaced by the decay) at f + t * fStride, of the output gate's
// projection at gate + t * gStride, beta's logit at betaLogit[t * bStride].
struct KdaTokenRows {
    float *q = nullptr, *k = nullptr;
    const float *v = nullptr;
    float *o = nullptr;
    int64_t stride = 0;
    float *f = nullptr;
    int64_t fStride = 0;
    const float *gate = nullptr;
    int64_t gStride = 0;
    const float *betaLogit = nullptr;
    int64_t bStride = 0;
};

// The rest of a run of the head's tokens once convolved (kdaHeadConvolve). Per token: the
// per-channel decay gate, beta, the L2 norms, the delta-rule step on the head's D × D state
// and the gated output norm, each value as the token alone computes it; the parts without
// state (gates and norms) go over all the tokens first, their sums several tokens side by side
// (rowSquareSums), the steps in order.
inline void kdaHeadTokens(const KdaHead &h, const KdaTokenRows &rows, int tokens, float *scratch)
{
    float *q = rows.q, *k = rows.k, *f = rows.f, *o = rows.o;
    const float *v = rows.v, *gate = rows.gate, *betaLogit = rows.betaLogit;
    const int64_t stride = rows.stride, fStride = rows.fStride, gStride = rows.gStride, bStride = rows.bStride;
    const int64_t D = h.D;
    float *u = scratch, *g = u + D, *ssA = g + D, *ssB = ssA + tokens;
    for (int t = 0; t < tokens; ++t) {
        // Decay gate in log space, per channel: lower · σ(A (f + dt)) with a lower bound,
        // −A · softplus(f + dt) without; then the decay itself.
        float *ft = f + t * fStride;
        if (h.gateLowerBound < 0.0f) {
            for (int64_t j = 0; j < D; ++j)
                ft[j] = h.A * (ft[j] + h.dtBias[j]);
            sigmoidRun(ft, ft, D);
            for (int64_t j = 0; j < D; ++j)
                ft[j] = h.gateLowerBound * ft[j];
        } else {
            for (int64_t j = 0; j < D; ++j)
                ft[j] = ft[j] + h.dtBias[j];
            softplusRun(ft, ft, D);
            for (int64_t j = 0; j < D; ++j)
                ft[j] = -h.A * ft[j];
        }
        quant::expRun(ft, ft, D);
    }
    // The L2 norms of q (scaled by 1/sqrt(D)) and k (l2NormalizeHead's arithmetic).
    rowSquareSums(q, stride, tokens, D, ssA);
    rowSquareSums(k, stride, tokens, D, ssB);
    for (int t = 0; t < tokens; ++t) {
        float *qt = q + t * stride, *kt = k + t * stride;
        const float rq = 1.0f / std::sqrt(ssA[t] + 1e-12f), rk = 1.0f / std::sqrt(ssB[t] + 1e-12f);
        for (int64_t j = 0; j < D; ++j)
            qt[j] = qt[j] * rq * h.qScale;
        for (int64_t j = 0; j < D; ++j)
            kt[j] = kt[j] * rk;
    }
    for (int t = 0; t < tokens; ++t)
        h.step(h.S, q + t * stride, k + t * stride, v + t * stride, f + t * fStride, sigmoid(betaLogit[t * bStride]), u,
               o + t * stride, D, D);
    // Gated RMSNorm of each token's output (shared o_norm weight; rmsNorm's arithmetic).
    rowSquareSums(o, stride, tokens, D, ssA);
    for (int t = 0; t < tokens; ++t) {
        float *ot = o + t * stride;
        const float r = 1.0f / std::sqrt(ssA[t] / static_cast<float>(D) + h.eps);
        for (int64_t j = 0; j < D; ++j)
            ot[j] = ot[j] * r * h.oNorm[j];
        sigmoidRun(gate + t * gStride, g, D);
        for (int64_t j = 0; j < D; ++j)
            ot[j] *= g[j];
    }
}

} // namespace waste::model
