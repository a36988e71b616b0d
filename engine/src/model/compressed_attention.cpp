// DeepSeek V4's attention (docs/architectures/deepseek-v4-flash.md; model.py Attention,
// Compressor, Indexer; HF's DeepseekV4Attention):
//   q  = wq_b rmsnorm(wq_a u), each head scaled to unit RMS, its tail rotated;
//   kv = rmsnorm(wkv u), tail rotated: one shared head that is key and value, pushed into the
//        window ring;
//   the compressor pools every `ratio` tokens into a row (normed, rotated at the block's first
//        position); on ratio-4 layers the indexer's own compressor makes a key per row and the
//        indexer's query picks index_topk rows;
//   each head attends to the window (the last `sliding_window` tokens, itself included) and
//        the compressed rows, with a learned sink in the softmax's denominator; its output's
//        tail is rotated back, and the heads go through wo_a per output group, then wo_b.
// With the trained rounding (Dsv4Config::trainedRounding) the kv rows and compressed rows go
// through the FP8 round trip, the indexer's queries and keys through a Hadamard transform and
// the FP4 one, as model.py and ds4 do; without it everything stays float, as in HF.
// Projections run for the chunk at once; the ring, the compressors and the attention token by
// token, so a chunk gives what its tokens give one at a time. The indexer's scores and the
// attention run on the panel kernel (model/indexer_scores.hpp, model/flash_attention.hpp).
#include "model/dsv4_qat.hpp"
#include "model/flash_attention.hpp"
#include "model/forward.hpp"
#include "model/indexer_scores.hpp"
#include "model/kv_compressor.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace waste::model {
namespace {

// The per-layer recurrent state's parts (State::allocate sizes S as Dsv4Config::recurrentFloats).
struct V4Layout {
    float *window;
    CompressorState comp, index;
};

V4Layout layoutOf(LayerState &s, const format::Dsv4Config &v, int layer)
{
    V4Layout l{};
    float *p = s.S.data();
    l.window = p;
    p += int64_t(v.window) * v.headDim;
    const auto take = [&](CompressorState &c, int ratio, int dim) {
        c.ratio = ratio;
        c.dim = dim;
        const int64_t half = format::Dsv4Config::compressorState(ratio, dim) / 2;
        c.keys = p;
        c.gates = p + half;
        p += 2 * half;
    };
    if (v.ratio(layer) > 0)
        take(l.comp, v.ratio(layer), v.headDim);
    if (v.indexed(layer))
        take(l.index, 4, v.indexDim);
    return l;
}

float dot(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

void unitRms(float *x, int64_t n, float eps)
{
    const float r = 1.0f / std::sqrt(dot(x, x, n) / float(n) + eps);
    for (int64_t i = 0; i < n; ++i)
        x[i] = x[i] * r;
}

} // namespace

void Forward::dsv4Attention(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos)
{
    const LayerWeights &lw = m_w.layers[static_cast<size_t>(layer)];
    const Dsv4Weights &w = lw.v4;
    const format::Dsv4Config &v = m_c.v4;
    const int64_t Hd = m_c.hidden, nh = m_c.heads, D = v.headDim, rd = v.ropeDim, R = m_c.qLora;
    const int64_t Q = nh * D, G = v.oGroups, groupIn = Q / G, oL = v.oLora;
    const int ratio = v.ratio(layer);
    const bool indexed = v.indexed(layer);
    const int64_t Hi = v.indexHeads, Di = v.indexDim, Iq = Hi * Di;
    const int64_t cw = ratio == 4 ? 2 * D : D, icw = 2 * Di, rowW = v.rowWidth(layer);
    const Dsv4Rope &rope = ratio > 0 ? m_v4Compressed : m_v4Plain;

    // Projections of the whole chunk.
    Vec qr(static_cast<size_t>(n * R)), q(static_cast<size_t>(n * Q)), kv(static_cast<size_t>(n * D));
    Vec ck, cg, iq, iw, ik, ig;
    {
        std::vector<quant::Product> ps = {{w.wqA.get(), a, Hd, qr.data(), R}, {w.wkv.get(), a, Hd, kv.data(), D}};
        if (ratio > 0) {
            ck.resize(static_cast<size_t>(n * cw));
            cg.resize(static_cast<size_t>(n * cw));
            ps.push_back({w.comp.wkv.get(), a, Hd, ck.data(), cw});
            ps.push_back({w.comp.wgate.get(), a, Hd, cg.data(), cw});
        }
        if (indexed) {
            iw.resize(static_cast<size_t>(n * Hi));
            ik.resize(static_cast<size_t>(n * icw));
            ig.resize(static_cast<size_t>(n * icw));
            ps.push_back({w.indexWeights.get(), a, Hd, iw.data(), Hi});
            ps.push_back({w.indexComp.wkv.get(), a, Hd, ik.data(), icw});
            ps.push_back({w.indexComp.wgate.get(), a, Hd, ig.data(), icw});
        }
        products(ps, n);
    }
    for (int t = 0; t < n; ++t)
        rmsNorm(qr.data() + t * R, w.qNorm->f32.data(), qr.data() + t * R, R, m_c.eps);
    {
        std::vector<quant::Product> ps = {{w.wqB.get(), qr.data(), R, q.data(), Q}};
        if (indexed) {
            iq.resize(static_cast<size_t>(n * Iq));
            ps.push_back({w.indexWqB.get(), qr.data(), R, iq.data(), Iq});
        }
        products(ps, n);
    }
    for (int t = 0; t < n; ++t) {
        for (int64_t h = 0; h < nh; ++h) {
            float *qh = q.data() + t * Q + h * D;
            unitRms(qh, D, m_c.eps); // model.py: q *= rsqrt(mean(q²) + eps), no weight
            rope.apply(qh + D - rd, pos[t]);
        }
        float *k = kv.data() + t * D;
        rmsNorm(k, w.kvNorm->f32.data(), k, D, m_c.eps);
        rope.apply(k + D - rd, pos[t]);
        if (v.trainedRounding)
            fp8RoundTrip(k, D - rd, 64); // the rotated tail stays as it is
        if (indexed)
            for (int64_t h = 0; h < Hi; ++h) {
                float *qi = iq.data() + t * Iq + h * Di;
                rope.apply(qi + Di - rd, pos[t]);
                if (v.trainedRounding) {
                    hadamard(qi, Di);
                    fp4RoundTrip(qi, Di, 32);
                }
            }
    }

    // Token by token: the ring, the compressors, the rows each head sees, attention.
    Vec o(static_cast<size_t>(n * Q));
    Vec row(static_cast<size_t>(std::max(D, Di)));
    std::vector<const float *> rows;
    std::vector<float> score, headWeights(static_cast<size_t>(Hi));
    std::vector<int64_t> order;
    for (int t = 0; t < n; ++t) {
        LayerState &s = *st[t];
        const int64_t p = pos[t];
        V4Layout l = layoutOf(s, v, layer);
        std::copy(kv.data() + t * D, kv.data() + (t + 1) * D, l.window + (p % v.window) * D);
        const int64_t block = ratio > 0 ? (p + 1) / ratio - 1 : -1; // the row this token completes, if any
        if (ratio > 0 && compressorStep(l.comp, ck.data() + t * cw, cg.data() + t * cw, w.comp.ape->f32.data(), p, row.data())) {
            float *dst = s.latent.data() + block * rowW;
            rmsNorm(row.data(), w.comp.norm->f32.data(), dst, D, m_c.eps);
            rope.apply(dst + D - rd, block * ratio);
            if (v.trainedRounding)
                fp8RoundTrip(dst, D - rd, 64);
        }
        if (indexed &&
            compressorStep(l.index, ik.data() + t * icw, ig.data() + t * icw, w.indexComp.ape->f32.data(), p, row.data())) {
            float *dst = s.latent.data() + block * rowW + D;
            rmsNorm(row.data(), w.indexComp.norm->f32.data(), dst, Di, m_c.eps);
            rope.apply(dst + Di - rd, block * ratio);
            if (v.trainedRounding) {
                hadamard(dst, Di);
                fp4RoundTrip(dst, Di, 32);
            }
        }
        // The rows: the window's positions max(0, p − window + 1) .. p, then compressed rows.
        rows.clear();
        for (int64_t r = std::max<int64_t>(0, p - v.window + 1); r <= p; ++r)
            rows.push_back(l.window + (r % v.window) * D);
        const int64_t nComp = ratio > 0 ? (p + 1) / ratio : 0;
        if (indexed && nComp > v.indexTopk) {
            // The indexer: Σ_h w_h relu(q_h · key_b), w_h = weights_proj_h · Di^-½ · Hi^-½
            // (model/indexer_scores.hpp); the index_topk best rows (ties to the lower row), in
            // row order.
            const float *wt = iw.data() + t * Hi;
            const float wScale = 1.0f / std::sqrt(float(Di)) / std::sqrt(float(Hi));
            for (int64_t h = 0; h < Hi; ++h)
                headWeights[size_t(h)] = wt[h] * wScale;
            score.assign(size_t(nComp), 0.0f);
            const int64_t lastRow = nComp - 1;
            const float *latent = s.latent.data();
            indexerScores(m_pool, {iq.data() + t * Iq, headWeights.data(), Hi, Di, 1, &lastRow},
                          [latent, rowW, D](int64_t b) { return latent + b * rowW + D; }, score.data(), nComp);
            order.resize(size_t(nComp));
            std::iota(order.begin(), order.end(), int64_t(0));
            std::partial_sort(order.begin(), order.begin() + v.indexTopk, order.end(), [&](int64_t x, int64_t y) {
                return score[size_t(x)] > score[size_t(y)] || (score[size_t(x)] == score[size_t(y)] && x < y);
            });
            std::sort(order.begin(), order.begin() + v.indexTopk);
            for (int64_t i = 0; i < v.indexTopk; ++i)
                rows.push_back(s.latent.data() + order[size_t(i)] * rowW);
        } else {
            for (int64_t b = 0; b < nComp; ++b)
                rows.push_back(s.latent.data() + b * rowW);
        }
        // Each head: softmax over the rows with its sink in the denominator only, the heads as
        // the queries of one blocked attention (flash_attention.hpp: panel products), a group of
        // heads per thread; each head's output tail rotated back.
        const int64_t nr = int64_t(rows.size());
        const int last = int(nr - 1);
        const std::vector<int> at(size_t(nh), last);
        const CachedRow row = [&rows](int64_t r) { return rows[size_t(r)]; };
        const int64_t group = std::max<int64_t>(m_pool.grainFor(nh, nr * D * 2), (nh + m_pool.threads() - 1) / m_pool.threads());
        m_pool.forRange(nh, group, [&](int64_t h0, int64_t h1) {
            const AttentionQueries heads{q.data() + t * Q + h0 * D, D, int(h1 - h0), at.data(), nullptr,
                                         w.sinks->f32.data() + h0};
            flashAttention(heads, D, row, row, D, 1.0f / std::sqrt(float(D)), nullptr, o.data() + t * Q + h0 * D, D);
            for (int64_t h = h0; h < h1; ++h)
                rope.apply(o.data() + t * Q + h * D + D - rd, p, /*inverse=*/true);
        });
    }

    // The grouped output projection: group g's heads through wo_a's g-th block, then wo_b.
    Vec z(static_cast<size_t>(n * G * oL));
    std::vector<quant::Product> ps;
    for (int64_t g = 0; g < G; ++g)
        ps.push_back({w.woA[size_t(g)].get(), o.data() + g * groupIn, Q, z.data() + g * oL, G * oL});
    products(ps, n);
    product(*w.woB, n, z.data(), G * oL, out, Hd);
}

} // namespace waste::model
