// Router lookahead (reference waste-engine.md §3.5): run layer L+1's router on the best
// estimate of its input that layer L has before its routed experts run, and start reading
// the most likely experts. It runs from layer L's fetch, once L's own reads are issued
// (moe.cpp), so the guesses load during L's expert compute and L+1's attention instead of
// only the latter. The real router still decides at L+1; a wrong guess costs a read,
// never a different logit.
//
// The estimate: the residual stream plus L's shared expert, normalised with L+1's own
// norm. On the benchmark container (layers 2-7, 32 tokens) its top three are right
// 93.9 % of the time and its top four 88 %, against 90.3 % and 82 % for the reference's
// estimate (L's normalised MoE input); the fourth guess, which goes only while a reader
// is idle, gains most (62 -> 71 %). K3's Attention Residuals replace the residual
// stream: there the partial sum plus L's shared experts is mixed with the block history
// as L+1 mixes its MoE input (on the tiny K3 container, 16 experts, top-4, the 6-wide
// list then holds 59.9 % of the chosen experts instead of 51.9 %).
//
// The first MoE layer has no MoE layer before it to guess from, so its guess comes from
// the token's embedding (normalised as that layer normalises its MoE input), made before
// layer 0 runs: its reads then overlap the dense layers and the first attention instead
// of all landing after its router with compute waiting. On the benchmark container that
// guess's top three are right 97 / 91 / 75 % of the time, as good as the guesses made one
// layer ahead, and the first layer's demand misses fell from 3.7 to 0.6 per token.
//
// Several sequences decoding together (waste/batch.hpp) predict the same way, each from
// its own row, with the router's rows read once for all of them; the source reads the
// union, every sequence's best guess first. Without it a batched step waited for every
// layer's reads after its router: bench_concurrent, 4 streams at the I/O-bound budget,
// 4 rounds side by side on a loaded 2-core machine, 18.0 ms of waiting per step on
// average before, 14.3 with it (one stream alone waits about 5 of 19).
#include "model/attn_res.hpp"
#include "model/forward.hpp"
#include "model/grouped_router.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

#include <algorithm>
#include <numeric>

namespace waste::model {

int Forward::nextMoeLayer(int layer) const
{
    int next = layer + 1;
    while (next < m_c.layers && !m_w.layers[static_cast<size_t>(next)].moe)
        ++next;
    return next < m_c.layers ? next : -1;
}

void Forward::predictExperts(int layer, int n, const float *b, ExpertSource &experts)
{
    const MoeWeights &w = m_w.layers[static_cast<size_t>(layer)].moeW;
    const int64_t E = m_c.experts, Hd = m_c.hidden;
    const int want = static_cast<int>(std::min<int64_t>(experts.lookaheadWidth(), E));
    // The router's rows read once for all n tokens (as the real router reads them).
    std::vector<float> keys(static_cast<size_t>(n * E));
    if (n == 1)
        quant::matvec(*w.router, b, keys.data(), m_pool);
    else
        quant::matvecs(*w.router, n, b, Hd, keys.data(), E, m_pool);
    const float *bias = w.bias ? w.bias->f32.data() : nullptr;
    std::vector<int> all; // n lists of `want`, token after token
    all.reserve(static_cast<size_t>(n * want));
    std::vector<int> ids(static_cast<size_t>(E));
    for (int t = 0; t < n; ++t) {
        float *key = keys.data() + t * E;
        for (int64_t e = 0; e < E; ++e)
            key[e] = sigmoid(key[e]) + (bias ? bias[e] : 0.0f); // selection key, as the router ranks
        keepBestGroups(key, E, m_c.groups, m_c.topkGroups); // DeepSeek-V3: only the kept groups
        std::iota(ids.begin(), ids.end(), 0);
        std::partial_sort(ids.begin(), ids.begin() + want, ids.end(),
                          [&](int x, int y) { return key[x] > key[y] || (key[x] == key[y] && x < y); });
        all.insert(all.end(), ids.begin(), ids.begin() + want);
    }
    experts.prefetch(layer, all, n);
}

void Forward::lookahead(int layer, int n, const float *shared, ExpertSource &experts)
{
    const int next = nextMoeLayer(layer);
    if (next < 0)
        return;
    const LayerWeights &nw = m_w.layers[static_cast<size_t>(next)];
    const float *stream = m_moePartial ? m_moePartial : m_moeResidual;
    if (!stream)
        return; // not inside a decode step's run loop: nothing to estimate from
    // The closest thing to the next layer's MoE input known before this layer's routed
    // experts run: the stream plus this layer's shared expert (K3: mixed with the block
    // history as the next layer mixes its MoE input), under the next layer's norm. Only
    // the routed experts' output and the next attention are missing.
    const int64_t Hd = m_c.hidden;
    Vec x(stream, stream + n * Hd);
    for (int64_t i = 0; i < n * Hd; ++i)
        x[static_cast<size_t>(i)] += shared[i];
    for (int t = 0; t < n; ++t) {
        float *xt = x.data() + t * Hd;
        if (m_moePartial)
            attnResMix((*m_moeHistories)[static_cast<size_t>(t)], xt, nw.mlpResNorm->f32.data(), nw.mlpResProj->f32.data(),
                       xt, Hd, m_c.eps);
        rmsNorm(xt, nw.postNorm->f32.data(), xt, Hd, m_c.eps);
    }
    predictExperts(next, n, x.data(), experts);
}

void Forward::lookaheadFirst(int n, const float *h, ExpertSource &experts)
{
    const int first = nextMoeLayer(-1);
    if (first < 0)
        return;
    const int64_t Hd = m_c.hidden;
    Vec b(static_cast<size_t>(n * Hd));
    for (int t = 0; t < n; ++t)
        rmsNorm(h + t * Hd, m_w.layers[static_cast<size_t>(first)].postNorm->f32.data(), b.data() + t * Hd, Hd, m_c.eps);
    predictExperts(first, n, b.data(), experts);
}

} // namespace waste::model
