// Kimi Delta Attention over a chunk of tokens: short causal convolutions, per-channel decay
// gate, per-head beta, the delta-rule state update and the gated output norm.
#include "model/forward.hpp"
#include "model/kda_head.hpp"
#include "quant/trunk_matvec.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

// n tokens in chunk order, token t updating *st[t] (tokens of one sequence are adjacent):
// the projections from the inputs alone run for the whole chunk at once (one pass over each
// matrix, the matrices of the same input in one split), the convolutions, gates and
// recurrence in one split over every sequence's heads (a head's tokens in order against
// its own rings and state block), then the output projection for the whole chunk. Each
// token's values are those it gets alone.
void Forward::kda(int layer, int n, const float *a, float *out, LayerState *const *st)
{
    const KdaWeights &w = m_w.layers[static_cast<size_t>(layer)].k;
    const int64_t H = m_c.kdaHeads, D = m_c.kdaDim, C = H * D, Hd = m_c.hidden;
    const int K = m_c.convK;
    const size_t nC = static_cast<size_t>(n * C), nD = static_cast<size_t>(n * D);
    // Every buffer is written whole before it is read: the products fill q, k, v, the gates and
    // beta, the heads fill o.
    Vec local;
    float *q = passScratch(PassScratch::Attention, 6 * nC + 2 * nD + static_cast<size_t>(n * H), local);
    float *k = q + nC, *v = k + nC, *f = v + nC, *gam = f + nC, *o = gam + nC, *lowF = o + nC, *lowG = lowF + nD;
    float *beta = lowG + nD;
    {
        // q, k, v, the decay gate's and the output gate's first projections, and beta.
        std::vector<quant::Product> in = {{w.q.get(), a, Hd, q, C},     {w.k.get(), a, Hd, k, C},
                                          {w.v.get(), a, Hd, v, C},     {w.fa.get(), a, Hd, lowF, D},
                                          {w.b.get(), a, Hd, beta, H}};
        if (w.g)
            in.push_back({w.g.get(), a, Hd, gam, C});
        else
            in.push_back({w.ga.get(), a, Hd, lowG, D});
        products(in, n);
        // The gates' second projections (decay in log space, per channel).
        std::vector<quant::Product> second = {{w.fb.get(), lowF, D, f, C}};
        if (!w.g)
            second.push_back({w.gb.get(), lowG, D, gam, C});
        products(second, n);
    }
    const float *aLog = w.aLog->f32.data();
    const float *dt = w.dtBias->f32.data();
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    const float *on = w.oNorm->f32.data();
    const int R = K - 1; // convolution ring entries per channel

    // The runs of tokens that share a state, and one split over (run, head): heads are
    // independent (own channels, convolution rings, state block and output slice), and so
    // are different sequences; a head's tokens go in order. Every channel's arithmetic is
    // the whole-token code's, so the values do not change.
    const std::vector<int> runStart = stateRuns(st, n);
    const int64_t runs = static_cast<int64_t>(runStart.size()) - 1;
    const quant::DeltaRuleStep deltaRuleStep = quant::deltaRule();
    constexpr int kConvPiece = 64;
    m_pool.forRange(runs * H, m_pool.grainFor(runs * H, D * D / 2 * n / runs), [&](int64_t i0, int64_t i1) {
        Vec scratch(size_t(kdaHeadTokensScratch(D, kConvPiece)));
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = i / H, h = i % H;
            LayerState &s = *st[runStart[size_t(r)]];
            const int64_t ringAt = h * D * R, tapsAt = h * D * K;
            KdaHead head;
            head.D = D;
            head.K = K;
            head.qTaps = w.qConv->f32.data() + tapsAt;
            head.kTaps = w.kConv->f32.data() + tapsAt;
            head.vTaps = w.vConv->f32.data() + tapsAt;
            head.qRing = s.convQ.data() + ringAt;
            head.kRing = s.convK.data() + ringAt;
            head.vRing = s.convV.data() + ringAt;
            head.S = s.S.data() + h * D * D;
            head.dtBias = dt + h * D;
            head.A = std::exp(aLog[h]);
            head.gateLowerBound = m_c.gateLowerBound;
            head.qScale = invSqrtD;
            head.oNorm = on;
            head.eps = m_c.eps;
            head.step = deltaRuleStep;
            // The run in pieces of kConvPiece tokens: the piece's convolutions first (the
            // rings in registers across its tokens), then its gates, norms and steps while its
            // rows are still in cache.
            const int end = runStart[size_t(r) + 1];
            for (int t0 = runStart[size_t(r)]; t0 < end; t0 += kConvPiece) {
                const int t1 = std::min(end, t0 + kConvPiece);
                const int64_t at0 = t0 * C + h * D;
                kdaHeadConvolve(head, q + at0, k + at0, v + at0, C, t1 - t0);
                const KdaTokenRows rows{.q = q + at0, .k = k + at0, .v = v + at0, .o = o + at0, .stride = C,
                                        .f = f + at0, .fStride = C, .gate = gam + at0, .gStride = C,
                                        .betaLogit = beta + size_t(t0 * H + h), .bStride = H};
                kdaHeadTokens(head, rows, t1 - t0, scratch.data());
            }
        }
    });
    product(*w.o, n, o, C, out, Hd);
}

} // namespace waste::model
