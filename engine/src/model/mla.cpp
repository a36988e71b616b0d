// Multi-head latent attention, with kv_b_proj absorbed into the query (scores against the
// cached latent) and the output (values summed in latent space): the cache holds only
// dc + dr floats per position. Attention runs blocked on the panel kernel
// (flash_attention.hpp), a decode step's heads as the queries of one attention. Kimi-Linear and K3 apply no rotary
// embedding; the DeepSeek-V3 family rotates the dr dims of each query head and of the
// shared key before it is cached (RoPE with YaRN, yarn.hpp).
#include "model/flash_attention.hpp"
#include "model/forward.hpp"
#include "quant/panel_decode.hpp"
#include "quant/panel_gemm.hpp"
#include "quant/panel_product.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

namespace {

// Queries (dk floats each, scores scaled by `scale`) over the cached rows at `positions`
// (ascending; null: 0..last), all of them visible to every query: ctx[t] = Σ softmax(z)_j ·
// row(positions[j])[0..dv), blocked on the panel kernel (flash_attention.hpp). The heads of a
// decode step's token, or a prompt's token past DSA's index_topk.
void cachedAttention(const float *q, int64_t qStride, int count, int64_t dk, const float *cache, int64_t stride,
                     int64_t dv, const std::vector<int32_t> *positions, int64_t last, float scale, float *ctx,
                     int64_t ctxStride)
{
    const std::vector<int> at(size_t(count), int(positions ? int64_t(positions->size()) - 1 : last));
    const CachedRow row = [&](int64_t j) {
        return cache + (positions ? int64_t((*positions)[size_t(j)]) : j) * stride;
    };
    flashAttention({q, qStride, count, at.data(), nullptr}, dk, row, row, dv, scale, nullptr, ctx, ctxStride);
}

} // namespace

// n tokens in chunk order, token t at position pos[t] of *st[t] (tokens of one sequence are
// adjacent): the projections from the inputs run for the whole chunk at once (in one split),
// each token then writes its latent, every token attends over its own cache (one split
// over all tokens' heads: a token reads only positions up to its own, all written by
// then), then the gate and the output projection run for the whole chunk. Each token's
// values are those it gets alone.
void Forward::mla(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos)
{
    const MlaWeights &w = m_w.layers[static_cast<size_t>(layer)].m;
    const int64_t nh = m_c.heads, dn = m_c.qkNope, dr = m_c.qkRope, dv = m_c.vHead, dc = m_c.kvLora;
    const int64_t dq = dn + dr, lat = dc + dr, Hd = m_c.hidden;
    const int64_t ql = w.qa ? m_c.qLora : 0, gw = w.g ? nh * dv : 0;
    // Every buffer is written whole before it is read: the products fill q, the latent, the
    // gate and q_a; attention fills o.
    Vec local;
    float *qAll = passScratch(PassScratch::Attention, static_cast<size_t>(n * (nh * dq + lat + nh * dv + gw + ql)), local);
    float *cAll = qAll + n * nh * dq, *oAll = cAll + n * lat, *g = oAll + n * nh * dv, *t = g + n * gw;
    {
        std::vector<quant::Product> in = {{w.kva.get(), a, Hd, cAll, lat}};
        if (w.qa)
            in.push_back({w.qa.get(), a, Hd, t, ql});
        else
            in.push_back({w.q.get(), a, Hd, qAll, nh * dq});
        if (w.g)
            in.push_back({w.g.get(), a, Hd, g, nh * dv});
        products(in, n);
    }
    if (w.qa) {
        for (int i = 0; i < n; ++i)
            rmsNorm(t + i * ql, w.qaNorm->f32.data(), t + i * ql, ql, m_c.eps);
        product(*w.qb, n, t, ql, qAll, nh * dq);
    }
    if (w.idx.wqb)
        indexer(layer, n, a, t, st, pos); // before attention: it picks the keys
    int64_t span = 0; // positions attended over, all tokens together (the split's work)
    for (int i = 0; i < n; ++i) {
        LayerState &s = *st[i];
        const int p = pos[i];
        float *q = qAll + i * nh * dq, *c = cAll + i * lat;
        float *slot = s.latent.data() + int64_t(p) * lat;
        rmsNorm(c, w.kvaNorm->f32.data(), slot, dc, m_c.eps);
        for (int64_t k = 0; k < dr; ++k)
            slot[dc + k] = c[dc + k];
        if (m_rope.enabled()) {
            m_rope.rotate(slot + dc, p);
            for (int64_t h = 0; h < nh; ++h)
                m_rope.rotate(q + h * dq + dn, p);
        }
        span += p + 1;
    }
    if (m_prompt && m_mlaExpanded) {
        mlaExpandedPass(layer, n, qAll, oAll, *st[0], pos);
    } else if (m_prompt) {
        mlaPass(layer, n, qAll, oAll, st, pos);
    } else {
        // A decode step: every head's absorbed query (q_nope through the head's kv_b rows,
        // decoded once a step for all its tokens, then q_rope); the heads as the queries of
        // one blocked attention over the token's positions (or its DSA selection), several
        // heads a piece of the split; each head's output through its other kv_b rows.
        const int64_t items = int64_t(n) * nh;
        std::vector<const std::vector<int32_t> *> sel(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            sel[size_t(i)] = selection(layer, st[i], pos[i]);
        Vec qa(static_cast<size_t>(items * lat)), ctx(static_cast<size_t>(items * dc));
        m_pool.forRange(nh, m_pool.grainFor(nh, dn * dc * (n + 1)), [&](int64_t h0, int64_t h1) {
            Vec rows(static_cast<size_t>(dn * dc));
            for (int64_t h = h0; h < h1; ++h) {
                for (int64_t k = 0; k < dn; ++k)
                    quant::decodeTrunkRow(*w.kvb, h * (dn + dv) + k, rows.data() + k * dc);
                for (int tok = 0; tok < n; ++tok) {
                    const float *qN = qAll + tok * nh * dq + h * dq;
                    float *qabs = qa.data() + (tok * nh + h) * lat;
                    std::fill(qabs, qabs + dc, 0.0f);
                    for (int64_t k = 0; k < dn; ++k) {
                        const float *row = rows.data() + k * dc;
                        for (int64_t c = 0; c < dc; ++c)
                            qabs[c] += qN[k] * row[c];
                    }
                    std::copy(qN + dn, qN + dq, qabs + dc);
                }
            }
        });
        const float invScale = m_rope.scoreScale();
        const int64_t perItem = span / n * lat * 2;
        m_pool.forRange(items, std::max<int64_t>(m_pool.grainFor(items, perItem), 8), [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1;) { // the piece's heads, token by token
                const int64_t tok = i / nh, end = std::min(i1, (tok + 1) * nh);
                cachedAttention(qa.data() + i * lat, lat, int(end - i), lat, st[tok]->latent.data(), lat, dc,
                                sel[size_t(tok)], pos[tok], invScale, ctx.data() + i * dc, dc);
                i = end;
            }
        });
        m_pool.forRange(items, m_pool.grainFor(items, dv * dc), [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1; ++i) {
                const int64_t h = i % nh;
                for (int64_t k = 0; k < dv; ++k)
                    oAll[(i / nh) * nh * dv + h * dv + k] =
                        quant::rowDot(*w.kvb, h * (dn + dv) + dn + k, ctx.data() + i * dc);
            }
        });
    }
    if (w.g)
        for (int64_t i = 0; i < n * nh * dv; ++i)
            oAll[i] *= sigmoid(g[i]);
    product(*w.o, n, oAll, nh * dv, out, Hd);
}

// A prompt's pass: per head, the absorbed queries of the tokens (their q_nope times that head's
// rows of kv_b_proj, as panel products), blocked attention over the latent cache
// (flash_attention.hpp: keys are the latent rows with their rotated part, values their
// latent part), and the values' up-projection through the head's other kv_b_proj rows.
// Heads are split over the pool; each writes its own slice of o. The attention takes a
// thread's heads together: they share the keys and values, so each block's panels are built
// once a thread (it was once a head: a fifth of a 4,096-token pass on Kimi-Linear's shape).
void Forward::mlaPass(int layer, int n, const float *qAll, float *oAll, LayerState *const *st, const int *pos)
{
    const MlaWeights &w = m_w.layers[static_cast<size_t>(layer)].m;
    const int64_t nh = m_c.heads, dn = m_c.qkNope, dr = m_c.qkRope, dv = m_c.vHead, dc = m_c.kvLora;
    const int64_t dq = dn + dr, lat = dc + dr;
    const float invScale = m_rope.scoreScale();
    const quant::PanelGemm gemm = quant::panelGemm();
    constexpr int64_t B = quant::kPanelRows;
    std::vector<const std::vector<int32_t> *> sel(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        sel[size_t(i)] = selection(layer, st[i], pos[i]);
    // The pass goes 64 tokens a piece: per head, the piece's absorbed queries; the attention
    // of its tokens without a selection, a thread's heads at once; then each token with one
    // (DSA) attends over it with all its heads as the queries of one attention; then per head
    // the outputs. Every token's values are those it gets in any piece, with any heads beside
    // it (flash_attention.hpp, panel_gemm.hpp: per query, per input).
    constexpr int kPiece = 64;
    // Each thread takes one run of heads: all of them share the latent keys and values, so
    // one attention over all their queries builds each block's panels once, not once a head.
    // Runs of heads are at most as many as threads, so run r has its own slot of scratch:
    // a head's kv_b rows and panel, its run's queries and outputs (a piece's whole heads
    // need no copy), kept for the pass with the piece's absorbed queries and outputs.
    const int64_t headRun = std::max<int64_t>(1, (nh + m_pool.threads() - 1) / m_pool.threads());
    const int64_t slots = (nh + headRun - 1) / headRun;
    const int64_t rowsFloats = std::max(dn, dv) * dc, panelFloats = std::max(dn, dc) * B;
    const int64_t slotFloats = rowsFloats + panelFloats + kPiece * headRun * (lat + dc);
    Vec local;
    float *qAbs = passScratch(PassScratch::MlaPieces,
                              static_cast<size_t>(kPiece * nh * (lat + dc) + slots * slotFloats), local);
    float *ctxAll = qAbs + kPiece * nh * lat, *slot0 = ctxAll + kPiece * nh * dc;
    const auto slotOf = [&](int64_t h0) { return slot0 + (h0 / headRun) * slotFloats; };
    for (int p0 = 0; p0 < n; p0 += kPiece) {
        const int m = std::min(kPiece, n - p0);
        bool anySel = false;
        m_pool.forRange(nh, headRun, [&](int64_t h0, int64_t h1) {
            float *rows = slotOf(h0), *panel = rows + rowsFloats;
            for (int64_t h = h0; h < h1; ++h) {
                // Absorbed queries: q_abs[t] = Σ_i q_nope[t][i] · kv_b[h(dn + dv) + i], then q_rope.
                for (int64_t i = 0; i < dn; ++i)
                    quant::decodeTrunkRow(*w.kvb, h * (dn + dv) + i, rows + i * dc);
                for (int64_t c0 = 0; c0 < dc; c0 += B) {
                    const int64_t width = std::min(B, dc - c0);
                    for (int64_t i = 0; i < dn; ++i)
                        for (int64_t j = 0; j < B; ++j)
                            panel[i * B + j] = j < width ? rows[i * dc + c0 + j] : 0.0f;
                    gemm(panel, dn, qAll + p0 * nh * dq + h * dq, nh * dq, m, qAbs + h * lat + c0, nh * lat, width);
                }
                for (int t = 0; t < m; ++t)
                    std::copy(qAll + (p0 + t) * nh * dq + h * dq + dn, qAll + (p0 + t) * nh * dq + h * dq + dq,
                              qAbs + (t * nh + h) * lat + dc);
            }
        });
        // Runs of tokens of one sequence without a selection: blocked over every earlier
        // position, a run's tokens times a thread's heads as the queries of one attention
        // (token-major, as qAbs and ctxAll hold them, through a scratch where the heads are a
        // part of a token's). A token with a selection attends below.
        m_pool.forRange(nh, headRun, [&](int64_t h0, int64_t h1) {
            const int64_t hs = h1 - h0;
            float *q = slotOf(h0) + rowsFloats + panelFloats, *ctx = q + kPiece * headRun * lat;
            std::vector<int> at;
            for (int t0 = 0; t0 < m;) {
                if (sel[size_t(p0 + t0)]) {
                    ++t0;
                    continue;
                }
                int t1 = t0 + 1;
                while (t1 < m && st[p0 + t1] == st[p0 + t0] && !sel[size_t(p0 + t1)])
                    ++t1;
                const int count = int((t1 - t0) * hs);
                const float *cache = st[p0 + t0]->latent.data();
                const CachedRow row = [cache, lat](int64_t s) { return cache + s * lat; };
                const bool whole = hs == nh; // the run's queries lie in qAbs as they are
                if (!whole)
                    for (int t = t0; t < t1; ++t)
                        std::copy(qAbs + (t * nh + h0) * lat, qAbs + (t * nh + h1) * lat, q + (t - t0) * hs * lat);
                at.resize(size_t(count));
                for (int i = 0; i < count; ++i)
                    at[size_t(i)] = pos[p0 + t0 + i / int(hs)];
                const AttentionQueries qs{whole ? qAbs + t0 * nh * lat : q, lat, count, at.data(), nullptr};
                float *dst = whole ? ctxAll + t0 * nh * dc : ctx;
                flashAttention(qs, lat, row, row, dc, invScale, nullptr, dst, dc);
                if (!whole)
                    for (int t = t0; t < t1; ++t)
                        std::copy(ctx + (t - t0) * hs * dc, ctx + (t - t0 + 1) * hs * dc, ctxAll + (t * nh + h0) * dc);
                t0 = t1;
            }
        });
        for (int t = 0; t < m; ++t)
            anySel = anySel || sel[size_t(p0 + t)];
        if (anySel)
            m_pool.forRange(m, 1, [&](int64_t t0, int64_t t1) {
                for (int64_t t = t0; t < t1; ++t)
                    if (const auto *s = sel[size_t(p0 + t)])
                        cachedAttention(qAbs + t * nh * lat, lat, int(nh), lat, st[p0 + t]->latent.data(), lat, dc, s,
                                        pos[p0 + t], invScale, ctxAll + t * nh * dc, dc);
            });
        // o[t][h dv + i] = kv_b[h(dn + dv) + dn + i] · ctx[t][h], 64 outputs at a time.
        m_pool.forRange(nh, headRun, [&](int64_t h0, int64_t h1) {
            float *rows = slotOf(h0), *panel = rows + rowsFloats;
            for (int64_t h = h0; h < h1; ++h) {
                for (int64_t i = 0; i < dv; ++i)
                    quant::decodeTrunkRow(*w.kvb, h * (dn + dv) + dn + i, rows + i * dc);
                for (int64_t r0 = 0; r0 < dv; r0 += B) {
                    const int64_t width = std::min(B, dv - r0);
                    for (int64_t k = 0; k < dc; ++k)
                        for (int64_t j = 0; j < B; ++j)
                            panel[k * B + j] = j < width ? rows[(r0 + j) * dc + k] : 0.0f;
                    gemm(panel, dc, ctxAll + h * dc, nh * dc, m, oAll + p0 * nh * dv + h * dv + r0, nh * dv, width);
                }
            }
        });
    }
}

// A prompt's piece in the expanded form (model/mla_form.hpp), every token of one sequence, in
// order. Each position's keys and values, per head, are kv_b_proj's rows times its cached
// latent: k_nope from the head's first dn rows, v from its next dv, and the rotated dims as
// cached. A position is expanded once a pass and layer, by the panel product (each value one
// ordered sum over the latent, whichever positions go with it), so a query's keys are the
// same bits whichever piece or pass wrote them; the queries then attend head by head over
// their rows as plain multi-head attention, straight into the heads' outputs.
void Forward::mlaExpandedPass(int layer, int n, const float *qAll, float *oAll, const LayerState &st, const int *pos)
{
    const MlaWeights &w = m_w.layers[static_cast<size_t>(layer)].m;
    const int64_t nh = m_c.heads, dn = m_c.qkNope, dr = m_c.qkRope, dv = m_c.vHead, dc = m_c.kvLora;
    const int64_t dq = dn + dr, lat = dc + dr, row = dq + dv, stride = nh * row;
    float *kv = m_mlaKv.get();
    if (m_mlaKvLayer != layer) { // a new layer: its rows from the first position
        m_mlaKvLayer = layer;
        m_mlaKvFilled = 0;
    }
    const int64_t f0 = m_mlaKvFilled, end = int64_t(pos[n - 1]) + 1;
    if (end > f0) {
        const float *latent = st.latent.data();
        const format::TrunkTensor &kvb = *w.kvb;
        std::vector<quant::PanelMatrix> views;
        std::vector<quant::PanelJob> jobs;
        views.reserve(size_t(2 * nh));
        for (int64_t h = 0; h < nh; ++h)
            for (const bool values : {false, true}) {
                const int64_t r0 = h * (dn + dv) + (values ? dn : 0);
                views.push_back({values ? dv : dn, dc, [&kvb, r0](int64_t r, float *panel) {
                                     quant::decodeTrunkPanel(kvb, r0 + r, panel);
                                 }});
                jobs.push_back({&views.back(), latent + f0 * lat, lat, kv + f0 * stride + h * row + (values ? dq : 0),
                                stride});
            }
        quant::panelProducts(jobs, end - f0, m_pool);
        for (int64_t s = f0; s < end; ++s)
            for (int64_t h = 0; h < nh; ++h)
                std::copy_n(latent + s * lat + dc, dr, kv + s * stride + h * row + dn);
        m_mlaKvFilled = end;
    }
    const float invScale = m_rope.scoreScale();
    m_pool.forRange(nh, 1, [&](int64_t h0, int64_t h1) {
        for (int64_t h = h0; h < h1; ++h) {
            const float *base = kv + h * row;
            const CachedRow key = [base, stride](int64_t s) { return base + s * stride; };
            const CachedRow value = [base, stride, dq](int64_t s) { return base + s * stride + dq; };
            flashAttention({qAll + h * dq, nh * dq, n, pos, nullptr}, dq, key, value, dv, invScale, nullptr,
                           oAll + h * dv, nh * dv);
        }
    });
}

} // namespace waste::model
