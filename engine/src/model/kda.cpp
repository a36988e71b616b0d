// Kimi Delta Attention for one token: short causal convolutions, per-channel decay
// gate, per-head beta, the delta-rule state update and the gated output norm.
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

#include <cmath>

namespace waste::model {
namespace {

// y = silu(Σ_j ring[c][j] w[c][j] + x[c] w[c][K−1]); ring shifts in the pre-conv x.
void shortConv(float *x, const float *w, float *ring, int64_t C, int K)
{
    const int R = K - 1;
    for (int64_t c = 0; c < C; ++c) {
        const float *wc = w + c * K;
        float *rc = ring + c * R;
        float y = 0.0f;
        for (int j = 0; j < R; ++j)
            y += rc[j] * wc[j];
        y += x[c] * wc[R];
        for (int j = 0; j + 1 < R; ++j)
            rc[j] = rc[j + 1];
        if (R > 0)
            rc[R - 1] = x[c];
        x[c] = silu(y);
    }
}

} // namespace

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
            float qs = 0.0f, ks = 0.0f;
            for (int64_t i = 0; i < D; ++i) {
                qs += qh[i] * qh[i];
                ks += kh[i] * kh[i];
            }
            const float rq = 1.0f / std::sqrt(qs + 1e-12f), rk = 1.0f / std::sqrt(ks + 1e-12f);
            for (int64_t i = 0; i < D; ++i) {
                qh[i] = qh[i] * rq * invSqrtD;
                kh[i] = kh[i] * rk;
            }
            float *S = st.S.data() + h * D * D;
            for (int64_t i = 0; i < D; ++i)
                decay[i] = std::exp(f[h * D + i]);
            // S' = diag(exp g) S ; u = S'^T k
            for (int64_t j = 0; j < D; ++j)
                u[j] = 0.0f;
            for (int64_t i = 0; i < D; ++i) {
                float *row = S + i * D;
                const float di = decay[i], ki = kh[i];
                for (int64_t j = 0; j < D; ++j) {
                    row[j] *= di;
                    u[j] += row[j] * ki;
                }
            }
            // δ = β (v − u) ; S += k δ^T ; o = S^T q
            const float bh = beta[h];
            for (int64_t j = 0; j < D; ++j)
                u[j] = bh * (vh[j] - u[j]);
            float *oh = o.data() + h * D;
            for (int64_t j = 0; j < D; ++j)
                oh[j] = 0.0f;
            for (int64_t i = 0; i < D; ++i) {
                float *row = S + i * D;
                const float ki = kh[i], qi = qh[i];
                for (int64_t j = 0; j < D; ++j) {
                    row[j] += ki * u[j];
                    oh[j] += row[j] * qi;
                }
            }
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
