// DeepSeek V4's residual stream (model.py Transformer.forward, Block.forward): each token's
// embedding copied into hc_mult streams; around each sublayer the streams are merged into its
// input (hyper_connections.cpp), normed, run, and written back through the Sinkhorn
// combination; at the end the head's own weights merge them once more.
#include "model/forward.hpp"
#include "model/hyper_connections.hpp"
#include "model/ops.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

void Forward::runHyper(int n, float *h, std::span<const Part> parts, ExpertSource &experts)
{
    const format::Dsv4Config &v = m_c.v4;
    const int64_t Hd = m_c.hidden, hc = v.hcMult, W = hc * Hd, M = (2 + hc) * hc;
    Vec X(static_cast<size_t>(n * W));
    for (int t = 0; t < n; ++t)
        for (int64_t i = 0; i < hc; ++i)
            std::copy(h + t * Hd, h + (t + 1) * Hd, X.data() + t * W + i * Hd);
    std::vector<LayerState *> states;
    std::vector<int> pos;
    for (const Part &p : parts)
        for (int t = 0; t < p.count; ++t) {
            states.push_back(nullptr);
            pos.push_back(p.state->pos + t);
        }
    Vec mix(static_cast<size_t>(n * M)), pre(static_cast<size_t>(n * hc)), post(static_cast<size_t>(n * hc)),
        comb(static_cast<size_t>(n * hc * hc)), a(static_cast<size_t>(n * Hd)), o(static_cast<size_t>(n * Hd));
    // The sublayer's normed input from the streams: mixes of the flattened streams (times
    // rsqrt(mean(x²) + eps)), split into pre / post / comb, merged, normed.
    auto before = [&](const TensorPtr &fn, const TensorPtr &scale, const TensorPtr &base, const TensorPtr &norm) {
        product(*fn, n, X.data(), W, mix.data(), M);
        for (int t = 0; t < n; ++t) {
            const float *x = X.data() + t * W;
            float ss = 0.0f;
            for (int64_t i = 0; i < W; ++i)
                ss += x[i] * x[i];
            const float r = 1.0f / std::sqrt(ss / float(W) + m_c.eps);
            float *m = mix.data() + t * M;
            for (int64_t i = 0; i < M; ++i)
                m[i] = m[i] * r;
            hcSplit(m, scale->f32.data(), base->f32.data(), int(hc), v.hcIters, v.hcEps, pre.data() + t * hc,
                    post.data() + t * hc, comb.data() + t * hc * hc);
            float *at = a.data() + t * Hd;
            hcMerge(x, pre.data() + t * hc, int(hc), Hd, at);
            rmsNorm(at, norm->f32.data(), at, Hd, m_c.eps);
        }
    };
    auto after = [&] {
        for (int t = 0; t < n; ++t)
            hcPost(X.data() + t * W, o.data() + t * Hd, post.data() + t * hc, comb.data() + t * hc * hc, int(hc), Hd);
    };
    for (int L = 0; L < m_c.layers; ++L) {
        const LayerWeights &lw = m_w.layers[static_cast<size_t>(L)];
        const Dsv4Weights &w = lw.v4;
        size_t t0 = 0;
        for (const Part &p : parts)
            for (int t = 0; t < p.count; ++t)
                states[t0++] = &p.state->layers[static_cast<size_t>(L)];
        before(w.hcAttnFn, w.hcAttnScale, w.hcAttnBase, lw.inNorm);
        // A prompt's pass: attention a piece at a time, each piece's tokens in order.
        const int piece = m_prompt ? m_piece : n;
        for (int s0 = 0; s0 < n; s0 += piece)
            attentionTokens(L, std::min(piece, n - s0), a.data() + s0 * Hd, o.data() + s0 * Hd, states.data() + s0,
                            pos.data() + s0);
        after();
        before(w.hcFfnFn, w.hcFfnScale, w.hcFfnBase, lw.postNorm);
        feedForward(L, n, a.data(), o.data(), experts);
        after();
        layerDone(L);
    }
    // The head's merge (no Sinkhorn); runParts then applies the final norm and the head.
    Vec headMix(static_cast<size_t>(n * hc)), w(static_cast<size_t>(hc));
    product(*m_w.hcHeadFn, n, X.data(), W, headMix.data(), hc);
    for (int t = 0; t < n; ++t) {
        const float *x = X.data() + t * W;
        float ss = 0.0f;
        for (int64_t i = 0; i < W; ++i)
            ss += x[i] * x[i];
        const float r = 1.0f / std::sqrt(ss / float(W) + m_c.eps);
        float *m = headMix.data() + t * hc;
        for (int64_t i = 0; i < hc; ++i)
            m[i] = m[i] * r;
        hcHeadWeights(m, m_w.hcHeadScale->f32[0], m_w.hcHeadBase->f32.data(), int(hc), v.hcEps, w.data());
        hcMerge(x, w.data(), int(hc), Hd, h + t * Hd);
    }
}

} // namespace waste::model
