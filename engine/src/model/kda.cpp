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
// matrix), the recurrence token by token against its own state, then the output projection
// for the whole chunk. Each token's values are those it gets alone.
void Forward::kda(int layer, int n, const float *a, float *out, LayerState *const *st)
{
    const KdaWeights &w = m_w.layers[static_cast<size_t>(layer)].k;
    const int64_t H = m_c.kdaHeads, D = m_c.kdaDim, C = H * D, Hd = m_c.hidden;
    const int K = m_c.convK;
    const size_t nC = static_cast<size_t>(n * C);
    Vec q(nC), k(nC), v(nC), f(nC), low(static_cast<size_t>(n * D)), gam(nC), beta(static_cast<size_t>(n * H)), o(nC);
    quant::matvecs(*w.q, n, a, Hd, q.data(), C, m_pool);
    quant::matvecs(*w.k, n, a, Hd, k.data(), C, m_pool);
    quant::matvecs(*w.v, n, a, Hd, v.data(), C, m_pool);
    // Decay gate in log space, per channel.
    quant::matvecs(*w.fa, n, a, Hd, low.data(), D, m_pool);
    quant::matvecs(*w.fb, n, low.data(), D, f.data(), C, m_pool);
    quant::matvecs(*w.b, n, a, Hd, beta.data(), H, m_pool);
    // Output gate.
    if (w.g) {
        quant::matvecs(*w.g, n, a, Hd, gam.data(), C, m_pool);
    } else {
        quant::matvecs(*w.ga, n, a, Hd, low.data(), D, m_pool);
        quant::matvecs(*w.gb, n, low.data(), D, gam.data(), C, m_pool);
    }
    const float *aLog = w.aLog->f32.data();
    const float *dt = w.dtBias->f32.data();
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    const float *on = w.oNorm->f32.data();
    for (int t = 0; t < n; ++t) {
        LayerState &s = *st[t];
        float *qt = q.data() + t * C, *kt = k.data() + t * C, *vt = v.data() + t * C, *ft = f.data() + t * C;
        float *bt = beta.data() + t * H, *ot = o.data() + t * C;
        const float *gt = gam.data() + t * C;
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

        // Heads are independent (own state block, own output slice): split them over threads.
        m_pool.forRange(H, m_pool.grainFor(H, D * D / 2), [&](int64_t h0, int64_t h1) {
            Vec u(D), decay(D);
            for (int64_t h = h0; h < h1; ++h) {
                float *qh = qt + h * D, *kh = kt + h * D, *vh = vt + h * D;
                l2NormalizeHead(qh, D, 1e-12f, invSqrtD);
                l2NormalizeHead(kh, D, 1e-12f, 1.0f);
                for (int64_t i = 0; i < D; ++i)
                    decay[i] = std::exp(ft[h * D + i]);
                deltaRuleStep(s.S.data() + h * D * D, qh, kh, vh, decay.data(), bt[h], u.data(), ot + h * D, D, D);
            }
        });

        // Gated RMSNorm per head (shared o_norm weight).
        for (int64_t h = 0; h < H; ++h) {
            float *oh = ot + h * D;
            rmsNorm(oh, on, oh, D, m_c.eps);
            for (int64_t j = 0; j < D; ++j)
                oh[j] *= sigmoid(gt[h * D + j]);
        }
    }
    quant::matvecs(*w.o, n, o.data(), C, out, Hd, m_pool);
}

} // namespace waste::model
