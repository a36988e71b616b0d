// Grouped-query attention (Qwen3-MoE, gpt-oss, GLM-4.5), for a chunk of tokens: q, k, v projections
// (with biases on gpt-oss and GLM-4.5, added before the norm), RMSNorm over each head of q
// and k (Qwen3; GLM-4.5 where use_qk_norm), the rotary embedding,
// the token's k and v into the layer's cache (a ring of `window` slots on sliding layers),
// then per head a softmax over the cached positions in position order (plus the head's
// learned sink logit on gpt-oss, which takes probability but gives no value), and o.
// Heads write their own slice of the output, so splitting them over threads changes nothing.
// A prompt's pass attends blockwise on full-attention layers (flash_attention.hpp).
// Qwen3-Next's gated attention: q_proj gives each head its q and then an output gate,
// and the heads' outputs are scaled by sigmoid(gate) before o; its rotary embedding turns
// only the first rotaryDim dims of a head (rotary.hpp), as GLM-4.5's does (half of each).
#include "model/flash_attention.hpp"
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

namespace {

void addBias(float *x, const TensorPtr &b, int64_t n)
{
    if (!b)
        return;
    for (int64_t i = 0; i < n; ++i)
        x[i] += b->f32[size_t(i)];
}

} // namespace

void Forward::gqa(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos)
{
    const GqaWeights &w = m_w.layers[static_cast<size_t>(layer)].g;
    const format::GqaConfig &g = m_c.g;
    const int64_t Hd = m_c.hidden, nh = m_c.heads, kvh = g.kvHeads, hd = g.headDim, group = nh / kvh;
    const int64_t qw = (g.outputGate ? 2 : 1) * nh * hd; // q_proj's rows: q, or q and the gate per head
    const size_t N = static_cast<size_t>(n);
    Vec qAll(N * size_t(qw)), kAll(N * size_t(kvh * hd)), vAll(N * size_t(kvh * hd)), oAll(N * size_t(nh * hd));
    {
        const quant::Product in[] = {{w.q.get(), a, Hd, qAll.data(), qw},
                                     {w.k.get(), a, Hd, kAll.data(), kvh * hd},
                                     {w.v.get(), a, Hd, vAll.data(), kvh * hd}};
        products(in, n);
    }
    // Every token's q (normed, rotated; Qwen3-Next's gate split off), its k and v likewise,
    // and k, v into the layer's cache (a ring of `window` slots on sliding layers).
    Vec qs(N * size_t(nh * hd)), gates(g.outputGate ? N * size_t(nh * hd) : 0), cs(hd); // cs: cos, sin
    const auto prepare = [&](int t) {
        LayerState &s = *st[t];
        const int64_t slots = int64_t(s.keys.size()) / (kvh * hd);
        const float *qg = qAll.data() + t * qw;
        float *q = qs.data() + t * nh * hd, *k = kAll.data() + t * kvh * hd, *v = vAll.data() + t * kvh * hd;
        if (g.outputGate) {
            float *gate = gates.data() + t * nh * hd;
            for (int64_t h = 0; h < nh; ++h) {
                std::copy(qg + 2 * h * hd, qg + (2 * h + 1) * hd, q + h * hd);
                std::copy(qg + (2 * h + 1) * hd, qg + (2 * h + 2) * hd, gate + h * hd);
            }
        } else {
            std::copy(qg, qg + nh * hd, q);
        }
        addBias(q, w.qBias, nh * hd);
        addBias(k, w.kBias, kvh * hd);
        addBias(v, w.vBias, kvh * hd);
        m_rotary.angles(pos[t], cs.data(), cs.data() + hd / 2);
        for (int64_t h = 0; h < nh; ++h) {
            if (w.qNorm)
                rmsNorm(q + h * hd, w.qNorm->f32.data(), q + h * hd, hd, m_c.eps);
            m_rotary.apply(q + h * hd, cs.data(), cs.data() + hd / 2);
        }
        for (int64_t h = 0; h < kvh; ++h) {
            if (w.kNorm)
                rmsNorm(k + h * hd, w.kNorm->f32.data(), k + h * hd, hd, m_c.eps);
            m_rotary.apply(k + h * hd, cs.data(), cs.data() + hd / 2);
        }
        const int64_t slot = s.kvRing ? pos[t] % slots : pos[t];
        std::copy(k, k + kvh * hd, s.keys.begin() + slot * kvh * hd);
        std::copy(v, v + kvh * hd, s.values.begin() + slot * kvh * hd);
    };
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    // One token over its cached positions (a sliding layer's ring: the last `slots`): the q heads
    // that share a kv head as the queries of one blocked attention (flash_attention.hpp), a
    // kv head's group a piece of the split.
    const auto attend = [&](int t) {
        const LayerState &s = *st[t];
        const int64_t slots = int64_t(s.keys.size()) / (kvh * hd);
        const bool ring = s.kvRing; // a sliding layer keeps only the last `slots` positions
        const int first = ring ? int(std::max<int64_t>(0, int64_t(pos[t]) + 1 - slots)) : 0;
        const int64_t span = int64_t(pos[t]) + 1 - first, row = kvh * hd;
        const std::vector<int> at(size_t(group), pos[t]), from(size_t(group), first);
        m_pool.forRange(kvh, m_pool.grainFor(kvh, group * span * hd * 2), [&](int64_t kv0, int64_t kv1) {
            for (int64_t kv = kv0; kv < kv1; ++kv) {
                const float *keys = s.keys.data() + kv * hd, *values = s.values.data() + kv * hd;
                const auto slot = [ring, slots](int64_t p) { return ring ? p % slots : p; };
                const AttentionQueries queries{qs.data() + t * nh * hd + kv * group * hd, hd, int(group), at.data(),
                                               from.data(), w.sinks ? w.sinks->f32.data() + kv * group : nullptr};
                flashAttention(queries, hd, [&](int64_t p) { return keys + slot(p) * row; },
                               [&](int64_t p) { return values + slot(p) * row; }, hd, scale, nullptr,
                               oAll.data() + t * nh * hd + kv * group * hd, hd);
            }
        });
    };
    // A prompt's pass over a full-attention layer: every k and v in first, then each head's
    // queries attend blockwise (flash_attention.hpp), the tokens of one sequence together. A
    // sliding layer's ring would lose positions an earlier query of the pass still sees, so
    // there (and for generated tokens) each token attends as it is written.
    bool blocked = m_prompt;
    for (int t = 0; t < n && blocked; ++t)
        blocked = !st[t]->kvRing;
    if (blocked) {
        for (int t = 0; t < n; ++t)
            prepare(t);
        m_pool.forRange(nh, 1, [&](int64_t h0, int64_t h1) {
            for (int64_t h = h0; h < h1; ++h) {
                const int64_t kvOff = (h / group) * hd;
                for (int t0 = 0; t0 < n;) {
                    int t1 = t0 + 1;
                    while (t1 < n && st[t1] == st[t0])
                        ++t1;
                    const float *keys = st[t0]->keys.data() + kvOff, *values = st[t0]->values.data() + kvOff;
                    const int64_t row = kvh * hd;
                    const AttentionQueries queries{qs.data() + t0 * nh * hd + h * hd, nh * hd, t1 - t0, pos + t0, nullptr};
                    flashAttention(queries, hd, [keys, row](int64_t p) { return keys + p * row; },
                                   [values, row](int64_t p) { return values + p * row; }, hd, scale,
                                   w.sinks ? &w.sinks->f32[size_t(h)] : nullptr, oAll.data() + t0 * nh * hd + h * hd,
                                   nh * hd);
                    t0 = t1;
                }
            }
        });
    } else {
        for (int t = 0; t < n; ++t) {
            prepare(t);
            attend(t);
        }
    }
    for (size_t i = 0; i < gates.size(); ++i)
        oAll[i] *= sigmoid(gates[i]);
    product(*w.o, n, oAll.data(), nh * hd, out, Hd);
    for (int t = 0; t < n; ++t)
        addBias(out + t * Hd, w.oBias, Hd);
}

} // namespace waste::model
