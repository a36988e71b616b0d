// Qwen3-Next's Gated DeltaNet over a chunk of tokens (docs/architectures/qwen3-next.md), and
// Qwen3.5-MoE's, which differs only in how its projections are stored (qwen3.5-moe.md).
// The same delta rule and short convolution as KDA (delta_rule.hpp, short_conv.hpp); what
// differs is kept here: q, k, v and the output gate z come from one projection and b, a
// from another, both laid out per key head (Qwen3.5: four projections, q|k|v already in
// the convolution's channel order, z, b and a each by value head); one decay per value head,
// g = −exp(A_log) · softplus(a + dt_bias); value heads share key heads in groups
// (num_v / num_k per key head); the L2 norm's epsilon sits inside the root (1e-6); the
// output norm's weight is plain and its gate is SiLU(z), not a sigmoid.
#include "model/delta_rule.hpp"
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "model/short_conv.hpp"
#include "quant/trunk_matvec.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

void Forward::gatedDeltaNet(int layer, int n, const float *a, float *out, LayerState *const *st)
{
    const GdnWeights &w = m_w.layers[static_cast<size_t>(layer)].gdn;
    const format::GqaConfig &g = m_c.g;
    const int64_t Hd = m_c.hidden;
    const int64_t Hk = g.linKeyHeads, Hv = g.linValueHeads, Dk = g.linKeyDim, Dv = g.linValueDim;
    const int64_t Kw = Hk * Dk, Vw = Hv * Dv, r = Hv / Hk; // r value heads per key head
    const int64_t pw = 2 * Kw + 2 * Vw;
    const size_t N = static_cast<size_t>(n);
    const bool split = g.splitProjections;
    // Interleaved: [q k v z] per key head in projAll, [b a] per key head in baAll. Split:
    // q|k|v then z in projAll, b then a in baAll, each as a token's contiguous run.
    Vec projAll(N * size_t(pw)), baAll(N * size_t(2 * Hv)), oAll(N * size_t(Vw));
    if (split) {
        Vec zAll(N * size_t(Vw)), bAll(N * size_t(Hv)), aAll(N * size_t(Hv));
        const quant::Product in[] = {{w.qkv.get(), a, Hd, projAll.data(), 2 * Kw + Vw}, {w.z.get(), a, Hd, zAll.data(), Vw},
                                     {w.b.get(), a, Hd, bAll.data(), Hv}, {w.a.get(), a, Hd, aAll.data(), Hv}};
        products(in, n);
        // Re-laid per token as [q|k|v|z] and [b|a], so the loop below reads one layout.
        for (size_t t = N; t-- > 0;) {
            float *dst = projAll.data() + t * size_t(pw);
            std::copy_backward(projAll.data() + t * size_t(2 * Kw + Vw), projAll.data() + (t + 1) * size_t(2 * Kw + Vw),
                               dst + 2 * Kw + Vw);
        }
        for (size_t t = 0; t < N; ++t) {
            std::copy_n(zAll.data() + t * size_t(Vw), Vw, projAll.data() + t * size_t(pw) + 2 * Kw + Vw);
            std::copy_n(bAll.data() + t * size_t(Hv), Hv, baAll.data() + t * size_t(2 * Hv));
            std::copy_n(aAll.data() + t * size_t(Hv), Hv, baAll.data() + t * size_t(2 * Hv) + Hv);
        }
    } else {
        const quant::Product in[] = {{w.qkvz.get(), a, Hd, projAll.data(), pw}, {w.ba.get(), a, Hd, baAll.data(), 2 * Hv}};
        products(in, n);
    }
    const float *aLog = w.aLog->f32.data(), *dt = w.dtBias->f32.data();
    const float invSqrtDk = 1.0f / std::sqrt(static_cast<float>(Dk));
    const quant::DeltaRuleStep deltaRuleStep = quant::deltaRule();
    const float *nw = w.norm->f32.data();
    const int64_t cw = 2 * Kw + Vw; // the convolution's channels: all q, then all k, then all v
    // Each token's row of projAll laid as [q|k|v|z], beta and the decay per value head.
    Vec qkv(static_cast<size_t>(cw)), zt(static_cast<size_t>(Vw)), beta(N * size_t(Hv)), decay(N * size_t(Hv));
    for (int t = 0; t < n; ++t) {
        float *proj = projAll.data() + t * pw;
        const float *ba = baAll.data() + t * 2 * Hv;
        if (!split) { // per key head [q (Dk), k (Dk), v (r Dv), z (r Dv)]; [b (r), a (r)] in baAll
            float *q = qkv.data(), *k = q + Kw, *v = k + Kw;
            for (int64_t h = 0; h < Hk; ++h) {
                const float *src = proj + h * (2 * Dk + 2 * r * Dv);
                std::copy(src, src + Dk, q + h * Dk);
                std::copy(src + Dk, src + 2 * Dk, k + h * Dk);
                std::copy(src + 2 * Dk, src + 2 * Dk + r * Dv, v + h * r * Dv);
                std::copy(src + 2 * Dk + r * Dv, src + 2 * Dk + 2 * r * Dv, zt.data() + h * r * Dv);
            }
            std::copy(qkv.begin(), qkv.end(), proj);
            std::copy(zt.begin(), zt.end(), proj + cw);
        }
        for (int64_t h = 0; h < Hk; ++h)
            for (int64_t j = 0; j < r; ++j) {
                const int64_t hv = h * r + j;
                const float bv = split ? ba[hv] : ba[h * 2 * r + j], av = split ? ba[Hv + hv] : ba[h * 2 * r + r + j];
                beta[size_t(t * Hv + hv)] = sigmoid(bv);
                decay[size_t(t * Hv + hv)] = std::exp(-std::exp(aLog[hv]) * softplus(av + dt[hv]));
            }
    }
    // The convolution over each run of tokens sharing a state (its ring runs in order), split
    // over (run, block of channels): channels are independent. Then the key heads' L2 norms,
    // once before their value heads read them.
    const std::vector<int> runStart = stateRuns(st, n);
    const int64_t runs = static_cast<int64_t>(runStart.size()) - 1;
    constexpr int64_t kConvBlock = 256;
    const int64_t blocks = (cw + kConvBlock - 1) / kConvBlock;
    m_pool.forRange(runs * blocks, m_pool.grainFor(runs * blocks, kConvBlock * 16 * n / runs), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t run = i / blocks, c0 = (i % blocks) * kConvBlock, width = std::min(kConvBlock, cw - c0);
            const int t0 = runStart[size_t(run)], t1 = runStart[size_t(run) + 1];
            LayerState &s = *st[t0];
            shortConvRows(projAll.data() + t0 * pw + c0, pw, t1 - t0, w.conv->f32.data() + c0 * m_c.convK,
                          s.convQ.data() + c0 * (m_c.convK - 1), width, m_c.convK);
        }
    });
    for (int t = 0; t < n; ++t) {
        float *proj = projAll.data() + t * pw;
        for (int64_t h = 0; h < Hk; ++h) {
            l2NormalizeHead(proj + h * Dk, Dk, 1e-6f, invSqrtDk);
            l2NormalizeHead(proj + Kw + h * Dk, Dk, 1e-6f, 1.0f);
        }
    }
    // The delta rule in one split over (run of tokens sharing a state, value head), as KDA's:
    // value heads are independent (own state block, own output slice), a head's tokens go in
    // order, and each step is the one a token alone takes.
    m_pool.forRange(runs * Hv, m_pool.grainFor(runs * Hv, Dk * Dv / 2 * n / runs), [&](int64_t i0, int64_t i1) {
        Vec u(Dv), dk(Dk);
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t run = i / Hv, h = i % Hv, kh = h / r;
            float *S = st[runStart[size_t(run)]]->S.data() + h * Dk * Dv;
            for (int t = runStart[size_t(run)]; t < runStart[size_t(run) + 1]; ++t) {
                const float *q = projAll.data() + t * pw, *k = q + Kw, *v = k + Kw;
                std::fill(dk.begin(), dk.end(), decay[size_t(t * Hv + h)]);
                deltaRuleStep(S, q + kh * Dk, k + kh * Dk, v + h * Dv, dk.data(), beta[size_t(t * Hv + h)], u.data(),
                              oAll.data() + t * Vw + h * Dv, Dk, Dv);
            }
        }
    });
    // Gated RMSNorm per token and value head: norm(o) · w · SiLU(z).
    for (int t = 0; t < n; ++t) {
        float *o = oAll.data() + t * Vw, *z = projAll.data() + t * pw + cw;
        siluRun(z, z, Vw);
        for (int64_t h = 0; h < Hv; ++h) {
            float *oh = o + h * Dv;
            rmsNorm(oh, nw, oh, Dv, m_c.eps);
            for (int64_t j = 0; j < Dv; ++j)
                oh[j] *= z[h * Dv + j];
        }
    }
    product(*w.out, n, oAll.data(), Vw, out, Hd);
}

} // namespace waste::model
