// Kimi Delta Attention over a chunk of tokens: short causal convolutions, per-channel decay
// gate, per-head beta, the delta-rule state update and the gated output norm.
#include "model/delta_rule.hpp"
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "model/short_conv.hpp"
#include "quant/trunk_matvec.hpp"

#include <cmath>

namespace waste::model {

// n tokens in chunk order, token t updating *st[t] (tokens of one sequence are adjacent):
// the projections from the inputs alone run for the whole chunk at once (one pass over each
// matrix, the matrices of the same input in one split), the convolutions and gates token by
// token, the recurrence in one split over every sequence's heads (a head's tokens in order
// against its own state block), then the output projection for the whole chunk. Each
// token's values are those it gets alone.
void Forward::kda(int layer, int n, const float *a, float *out, LayerState *const *st)
{
    const KdaWeights &w = m_w.layers[static_cast<size_t>(layer)].k;
    const int64_t H = m_c.kdaHeads, D = m_c.kdaDim, C = H * D, Hd = m_c.hidden;
    const int K = m_c.convK;
    const size_t nC = static_cast<size_t>(n * C), nD = static_cast<size_t>(n * D);
    Vec q(nC), k(nC), v(nC), f(nC), lowF(nD), lowG(nD), gam(nC), beta(static_cast<size_t>(n * H)), o(nC);
    {
        // q, k, v, the decay gate's and the output gate's first projections, and beta.
        std::vector<quant::Product> in = {{w.q.get(), a, Hd, q.data(), C},     {w.k.get(), a, Hd, k.data(), C},
                                          {w.v.get(), a, Hd, v.data(), C},     {w.fa.get(), a, Hd, lowF.data(), D},
                                          {w.b.get(), a, Hd, beta.data(), H}};
        if (w.g)
            in.push_back({w.g.get(), a, Hd, gam.data(), C});
        else
            in.push_back({w.ga.get(), a, Hd, lowG.data(), D});
        quant::matvecsTogether(in, n, m_pool);
        // The gates' second projections (decay in log space, per channel).
        std::vector<quant::Product> second = {{w.fb.get(), lowF.data(), D, f.data(), C}};
        if (!w.g)
            second.push_back({w.gb.get(), lowG.data(), D, gam.data(), C});
        quant::matvecsTogether(second, n, m_pool);
    }
    const float *aLog = w.aLog->f32.data();
    const float *dt = w.dtBias->f32.data();
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    const float *on = w.oNorm->f32.data();
    for (int t = 0; t < n; ++t) {
        LayerState &s = *st[t];
        float *qt = q.data() + t * C, *kt = k.data() + t * C, *vt = v.data() + t * C, *ft = f.data() + t * C;
        float *bt = beta.data() + t * H;
        shortConv(qt, w.qConv->f32.data(), s.convQ.data(), C, K);
        shortConv(kt, w.kConv->f32.data(), s.convK.data(), C, K);
        shortConv(vt, w.vConv->f32.data(), s.convV.data(), C, K);
        for (int64_t h = 0; h < H; ++h) {
            const float A = std::exp(aLog[h]);
            for (int64_t j = 0; j < D; ++j) {
                const int64_t i = h * D + j;
                if (m_c.gateLowerBound < 0.0f)
                    ft[i] = m_c.gateLowerBound * sigmoid(A * (ft[i] + dt[i]));
                else
                    ft[i] = -A * softplus(ft[i] + dt[i]);
            }
        }
        for (int64_t h = 0; h < H; ++h)
            bt[h] = sigmoid(bt[h]);
    }

    // The runs of tokens that share a state, and one split over (run, head): heads are
    // independent (own state block, own output slice), and so are different sequences.
    std::vector<int> runStart;
    for (int t = 0; t < n; ++t)
        if (t == 0 || st[t] != st[t - 1])
            runStart.push_back(t);
    runStart.push_back(n);
    const int64_t runs = static_cast<int64_t>(runStart.size()) - 1;
    m_pool.forRange(runs * H, m_pool.grainFor(runs * H, D * D / 2 * n / runs), [&](int64_t i0, int64_t i1) {
        Vec u(D), decay(D);
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = i / H, h = i % H;
            float *S = st[runStart[size_t(r)]]->S.data() + h * D * D;
            for (int t = runStart[size_t(r)]; t < runStart[size_t(r) + 1]; ++t) {
                const int64_t at = t * C + h * D;
                float *qh = q.data() + at, *kh = k.data() + at, *vh = v.data() + at, *oh = o.data() + at;
                const float *fh = f.data() + at, *gh = gam.data() + at;
                l2NormalizeHead(qh, D, 1e-12f, invSqrtD);
                l2NormalizeHead(kh, D, 1e-12f, 1.0f);
                for (int64_t j = 0; j < D; ++j)
                    decay[j] = std::exp(fh[j]);
                deltaRuleStep(S, qh, kh, vh, decay.data(), beta[size_t(t * H + h)], u.data(), oh, D, D);
                // Gated RMSNorm of the head (shared o_norm weight).
                rmsNorm(oh, on, oh, D, m_c.eps);
                for (int64_t j = 0; j < D; ++j)
                    oh[j] *= sigmoid(gh[j]);
            }
        }
    });
    quant::matvecs(*w.o, n, o.data(), C, out, Hd, m_pool);
}

} // namespace waste::model
