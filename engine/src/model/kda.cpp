// Kimi Delta Attention for one token: short causal convolutions, per-channel decay
// gate, per-head beta, the delta-rule state update and the gated output norm.
#include "model/delta_rule.hpp"
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "model/short_conv.hpp"
#include "quant/trunk_matvec.hpp"

#include <cmath>

namespace waste::model {

void Forward::kda(int layer, const float *a, float *out, LayerState &st)
{
    const KdaWeights &w = m_w.layers[static_cast<size_t>(layer)].k;
    const int64_t H = m_c.kdaHeads, D = m_c.kdaDim, C = H * D;
    const int K = m_c.convK;
    Vec q(C), k(C), v(C), f(C), low(D), gam(C), beta(H), o(C);
    quant::matvec(*w.q, a, q.data(), m_pool);
    quant::matvec(*w.k, a, k.data(), m_pool);
    quant::matvec(*w.v, a, v.data(), m_pool);
    shortConv(q.data(), w.qConv->f32.data(), st.convQ.data(), C, K);
    shortConv(k.data(), w.kConv->f32.data(), st.convK.data(), C, K);
    shortConv(v.data(), w.vConv->f32.data(), st.convV.data(), C, K);

    // Decay gate in log space, per channel.
    quant::matvec(*w.fa, a, low.data(), m_pool);
    quant::matvec(*w.fb, low.data(), f.data(), m_pool);
    const float *aLog = w.aLog->f32.data();
    const float *dt = w.dtBias->f32.data();
    for (int64_t h = 0; h < H; ++h) {
        const float A = std::exp(aLog[h]);
        for (int64_t j = 0; j < D; ++j) {
            const int64_t i = h * D + j;
            if (m_c.gateLowerBound < 0.0f)
                f[i] = m_c.gateLowerBound * sigmoid(A * (f[i] + dt[i]));
            else
                f[i] = -A * softplus(f[i] + dt[i]);
        }
    }
    quant::matvec(*w.b, a, beta.data(), m_pool);
    for (int64_t h = 0; h < H; ++h)
        beta[h] = sigmoid(beta[h]);

    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    // Heads are independent (own state block, own output slice): split them over threads.
    m_pool.forRange(H, m_pool.grainFor(H, D * D / 2), [&](int64_t h0, int64_t h1) {
        Vec u(D), decay(D);
        for (int64_t h = h0; h < h1; ++h) {
            float *qh = q.data() + h * D, *kh = k.data() + h * D, *vh = v.data() + h * D;
            l2NormalizeHead(qh, D, 1e-12f, invSqrtD);
            l2NormalizeHead(kh, D, 1e-12f, 1.0f);
            for (int64_t i = 0; i < D; ++i)
                decay[i] = std::exp(f[h * D + i]);
            deltaRuleStep(st.S.data() + h * D * D, qh, kh, vh, decay.data(), beta[h], u.data(), o.data() + h * D, D, D);
        }
    });

    // Output gate and gated RMSNorm per head (shared o_norm weight).
    if (w.g) {
        quant::matvec(*w.g, a, gam.data(), m_pool);
    } else {
        quant::matvec(*w.ga, a, low.data(), m_pool);
        quant::matvec(*w.gb, low.data(), gam.data(), m_pool);
    }
    const float *on = w.oNorm->f32.data();
    for (int64_t h = 0; h < H; ++h) {
        float *oh = o.data() + h * D;
        rmsNorm(oh, on, oh, D, m_c.eps);
        for (int64_t j = 0; j < D; ++j)
            oh[j] *= sigmoid(gam[h * D + j]);
    }
    quant::matvec(*w.o, o.data(), out, m_pool);
}

} // namespace waste::model
