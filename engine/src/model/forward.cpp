#include "model/forward.hpp"
#include "model/mla_form.hpp"

#include "model/attn_res.hpp"
#include "model/ops.hpp"
#include "quant/panel_product.hpp"
#include "quant/trunk_matvec.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace waste::model {

Forward::Forward(const format::Manifest &manifest, const Weights &weights, const format::Codebooks &books,
                 compute::ThreadPool *pool)
    : m_manifest(manifest), m_c(manifest.config), m_w(weights), m_books(books),
      m_ownPool(pool ? nullptr : std::make_unique<compute::ThreadPool>(1)), m_pool(pool ? *pool : *m_ownPool),
      m_rope(m_c.rope, m_c.qkRope, m_c.qkNope + m_c.qkRope)
{
    if (manifest.quant.isNative() && m_c.experts > 0)
        m_nativeLayout = format::nativeRecordLayout(manifest.quant.native, m_c.moeInter, m_c.expertWidth());
    if (m_c.g.on)
        m_rotary = Rotary(m_c.g);
    if (m_c.v4.on) {
        m_v4Plain = Dsv4Rope(m_c.v4, false);
        m_v4Compressed = Dsv4Rope(m_c.v4, true);
    }
    const char *act = std::getenv("WASTE_NATIVE_ACTIVATIONS");
    m_int8Activations = manifest.quant.native == format::kFmtMXFP4 && act && std::string_view(act) == "int8";
}

void Forward::embed(int32_t token, float *out) const { m_w.embed->readRow(token, out); }

void Forward::layerDone(int layer)
{
    if (m_prompt && m_layerProgress && !m_layerProgress(layer + 1, m_c.layers))
        throw Error(ErrorCode::Cancelled, "stopped while reading the prompt");
}

void Forward::product(const format::TrunkTensor &w, int64_t n, const float *x, int64_t xStride, float *y,
                      int64_t yStride)
{
    if (!m_prompt) {
        quant::matvecs(w, n, x, xStride, y, yStride, m_pool);
        return;
    }
    quant::panelProduct(quant::trunkPanels(w), n, x, xStride, y, yStride, m_pool);
}

int64_t Forward::mlaExpandBytes(int64_t positions) const
{
    if (m_c.kvLora <= 0 || m_c.g.on || m_c.v4.on || m_c.dsa.on || m_c.kdaLayerCount() >= m_c.layers)
        return 0;
    return mlaExpandedRowBytes(positions, m_c.heads, m_c.qkNope, m_c.qkRope, m_c.vHead);
}

bool Forward::mlaExpands(int64_t first, int64_t n) const
{
    const MlaDims d{double(m_c.qkNope), double(m_c.qkRope), double(m_c.vHead), double(m_c.kvLora)};
    return mlaExpandBytes(1) > 0 && mlaExpandedPays(d, double(first), double(n));
}

float *Forward::passScratch(PassScratch which, size_t floats, Vec &local)
{
    Vec &v = m_prompt ? m_passScratch[static_cast<int>(which)] : local;
    if (v.size() < floats)
        v.resize(floats);
    return v.data();
}

void Forward::products(std::span<const quant::Product> ps, int64_t n)
{
    if (!m_prompt) {
        quant::matvecsTogether(ps, n, m_pool);
        return;
    }
    std::vector<quant::PanelMatrix> panels;
    panels.reserve(ps.size());
    for (const quant::Product &p : ps)
        panels.push_back(quant::trunkPanels(*p.w));
    std::vector<quant::PanelJob> jobs;
    for (size_t i = 0; i < ps.size(); ++i)
        jobs.push_back({&panels[i], ps[i].x, ps[i].xStride, ps[i].y, ps[i].yStride});
    quant::panelProducts(jobs, n, m_pool);
}

// The attention sub-layer for n tokens at positions pos0.. (strictly in order).
void Forward::attention(int layer, int n, const float *a, float *out, LayerState &st, int pos0)
{
    std::vector<LayerState *> states(static_cast<size_t>(n), &st);
    std::vector<int> pos(static_cast<size_t>(n));
    for (int t = 0; t < n; ++t)
        pos[static_cast<size_t>(t)] = pos0 + t;
    attentionTokens(layer, n, a, out, states.data(), pos.data());
}

// Token t of the chunk against *st[t] at position pos[t]: every kind takes the chunk whole
// (its projections then read each matrix once), its recurrence or cache token by token.
void Forward::attentionTokens(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos)
{
    if (m_c.v4.on) {
        dsv4Attention(layer, n, a, out, st, pos);
    } else if (m_c.g.next && m_w.layers[static_cast<size_t>(layer)].kda) {
        gatedDeltaNet(layer, n, a, out, st); // Qwen3-Next's Gated DeltaNet layers
    } else if (m_c.g.on) {
        gqa(layer, n, a, out, st, pos);
    } else if (m_w.layers[static_cast<size_t>(layer)].kda) {
        kda(layer, n, a, out, st);
    } else {
        mla(layer, n, a, out, st, pos);
    }
}

void Forward::feedForward(int layer, int n, const float *b, float *out, ExpertSource &experts)
{
    const LayerWeights &lw = m_w.layers[static_cast<size_t>(layer)];
    if (lw.moe && m_prompt) {
        moePass(layer, n, b, out, experts);
    } else if (lw.moe) {
        moe(layer, n, b, out, experts);
    } else if (m_prompt) { // a piece at a time: the FFN's scratch is a piece's
        const int64_t Hd = m_c.hidden;
        for (int s0 = 0; s0 < n; s0 += m_piece)
            denseFfn(lw.dense, std::min(m_piece, n - s0), b + s0 * Hd, out + s0 * Hd, m_c.inter);
    } else {
        denseFfn(lw.dense, n, b, out, m_c.inter);
    }
}

void Forward::attentionParts(int layer, const float *a, float *out, std::span<const Part> parts)
{
    std::vector<LayerState *> states;
    std::vector<int> pos;
    for (const Part &p : parts)
        for (int t = 0; t < p.count; ++t) {
            states.push_back(&p.state->layers[static_cast<size_t>(layer)]);
            pos.push_back(p.state->pos + t);
        }
    attentionTokens(layer, static_cast<int>(states.size()), a, out, states.data(), pos.data());
}

// n rows of the hidden size through one RMSNorm, split over the pool (each row its own).
void Forward::normRows(int n, const float *x, const float *weight, float *y)
{
    const int64_t Hd = m_c.hidden;
    m_pool.forRange(n, m_pool.grainFor(n, 4 * Hd), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            rmsNorm(x + t * Hd, weight, y + t * Hd, Hd, m_c.eps);
    });
}

// A prompt's pass on the plain residual stream, holding two rows a token (h and the normed
// input a): attention and dense FFNs run a piece (m_piece tokens) at a time (their scratch and
// output are a piece's), the MoE over the whole pass, adding its experts into h directly.
void Forward::runResidualPass(int n, float *h, std::span<const Part> parts, ExpertSource &experts)
{
    const int64_t Hd = m_c.hidden;
    std::vector<LayerState *> states;
    std::vector<int> pos;
    for (const Part &p : parts)
        for (int t = 0; t < p.count; ++t) {
            states.push_back(nullptr);
            pos.push_back(p.state->pos + t);
        }
    Vec a(static_cast<size_t>(n * Hd)), o(static_cast<size_t>(std::min(n, m_piece) * Hd));
    for (int L = 0; L < m_c.layers; ++L) {
        const LayerWeights &lw = m_w.layers[static_cast<size_t>(L)];
        size_t t0 = 0;
        for (const Part &p : parts)
            for (int t = 0; t < p.count; ++t)
                states[t0++] = &p.state->layers[static_cast<size_t>(L)];
        for (int s0 = 0; s0 < n; s0 += m_piece) {
            const int m = std::min(m_piece, n - s0);
            float *hs = h + s0 * Hd, *as = a.data() + s0 * Hd, *os = o.data();
            normRows(m, hs, lw.inNorm->f32.data(), as);
            attentionTokens(L, m, as, os, states.data() + s0, pos.data() + s0);
            for (int64_t i = 0; i < m * Hd; ++i)
                hs[i] = hs[i] + os[i];
        }
        normRows(n, h, lw.postNorm->f32.data(), a.data());
        if (lw.moe) {
            moePass(L, n, a.data(), h, experts, true);
        } else {
            for (int s0 = 0; s0 < n; s0 += m_piece) {
                const int m = std::min(m_piece, n - s0);
                denseFfn(lw.dense, m, a.data() + s0 * Hd, o.data(), m_c.inter);
                for (int64_t i = 0; i < m * Hd; ++i)
                    h[s0 * Hd + i] = h[s0 * Hd + i] + o[size_t(i)];
            }
        }
        layerDone(L);
    }
}

// Kimi-Linear's plain residual stream: h += attn(norm h); h += ffn(norm h).
void Forward::runResidual(int n, float *h, std::span<const Part> parts, ExpertSource &experts)
{
    const int64_t Hd = m_c.hidden;
    if (m_prompt) {
        runResidualPass(n, h, parts, experts);
        return;
    }
    Vec a(static_cast<size_t>(n * Hd)), o(static_cast<size_t>(n * Hd));
    for (int L = 0; L < m_c.layers; ++L) {
        const LayerWeights &lw = m_w.layers[static_cast<size_t>(L)];
        for (int t = 0; t < n; ++t)
            rmsNorm(h + t * Hd, lw.inNorm->f32.data(), a.data() + t * Hd, Hd, m_c.eps);
        attentionParts(L, a.data(), o.data(), parts);
        for (int64_t i = 0; i < n * Hd; ++i)
            h[i] = h[i] + o[i];
        for (int t = 0; t < n; ++t)
            rmsNorm(h + t * Hd, lw.postNorm->f32.data(), a.data() + t * Hd, Hd, m_c.eps);
        m_moeResidual = m_lookaheadRows > 0 ? h : nullptr;
        feedForward(L, n, a.data(), o.data(), experts);
        m_moeResidual = nullptr;
        for (int64_t i = 0; i < n * Hd; ++i)
            h[i] = h[i] + o[i];
    }
}


// K3's Attention Residuals (k3-math §2.2): per token, a block history R and a partial
// sum P replace the plain residual stream. On return h holds the final aggregation.
void Forward::runAttnRes(int n, float *h, std::span<const Part> parts, ExpertSource &experts)
{
    const int64_t Hd = m_c.hidden;
    const int B = m_c.attnResBlock;
    std::vector<std::vector<std::vector<float>>> R(static_cast<size_t>(n));
    Vec P(h, h + n * Hd), x(h, h + n * Hd), a(static_cast<size_t>(n * Hd)), r(static_cast<size_t>(n * Hd));
    bool pEmpty = false;
    for (int L = 0; L < m_c.layers; ++L) {
        const LayerWeights &lw = m_w.layers[static_cast<size_t>(L)];
        for (int t = 0; t < n; ++t) {
            float *xt = x.data() + t * Hd, *pt = P.data() + t * Hd;
            std::copy(xt, xt + Hd, pt); // P ← x (a no-op after layer 0)
            if (!R[t].empty())
                attnResMix(R[t], pt, lw.attnResNorm->f32.data(), lw.attnResProj->f32.data(), xt, Hd, m_c.eps);
            if (L % B == 0)
                R[t].emplace_back(pt, pt + Hd);
            rmsNorm(xt, lw.inNorm->f32.data(), a.data() + t * Hd, Hd, m_c.eps);
        }
        pEmpty = (L % B == 0);
        if (m_prompt) { // a prompt's pass: attention a piece at a time (its scratch is a piece's)
            std::vector<LayerState *> states;
            std::vector<int> pos;
            for (const Part &p : parts)
                for (int t = 0; t < p.count; ++t) {
                    states.push_back(&p.state->layers[static_cast<size_t>(L)]);
                    pos.push_back(p.state->pos + t);
                }
            for (int s0 = 0; s0 < n; s0 += m_piece)
                attentionTokens(L, std::min(m_piece, n - s0), a.data() + s0 * Hd, r.data() + s0 * Hd,
                                states.data() + s0, pos.data() + s0);
        } else {
            attentionParts(L, a.data(), r.data(), parts);
        }
        for (int t = 0; t < n; ++t) {
            float *xt = x.data() + t * Hd, *pt = P.data() + t * Hd;
            const float *rt = r.data() + t * Hd;
            for (int64_t i = 0; i < Hd; ++i)
                pt[i] = pEmpty ? rt[i] : pt[i] + rt[i];
            attnResMix(R[t], pt, lw.mlpResNorm->f32.data(), lw.mlpResProj->f32.data(), xt, Hd, m_c.eps);
            rmsNorm(xt, lw.postNorm->f32.data(), a.data() + t * Hd, Hd, m_c.eps);
        }
        m_moeHistories = m_lookaheadRows > 0 ? &R : nullptr;
        m_moePartial = m_lookaheadRows > 0 ? P.data() : nullptr;
        feedForward(L, n, a.data(), r.data(), experts);
        m_moeHistories = nullptr;
        m_moePartial = nullptr;
        for (int64_t i = 0; i < n * Hd; ++i) {
            P[i] = P[i] + r[i];
            x[i] = P[i];
        }
        layerDone(L);
    }
    for (int t = 0; t < n; ++t)
        attnResMix(R[t], x.data() + t * Hd, m_w.outResNorm->f32.data(), m_w.outResProj->f32.data(), h + t * Hd, Hd,
                   m_c.eps);
}

void Forward::run(std::span<const int32_t> tokens, State &state, ExpertSource &experts, const std::atomic<bool> *cancel,
                  Tokens kind, int passTokens)
{
    for (int32_t t : tokens)
        if (t < 0 || t >= m_c.vocab)
            throw Error(ErrorCode::Argument, "token id " + std::to_string(t) + " is out of range [0, " +
                                                 std::to_string(m_c.vocab) + ")");
    const bool hasMla = m_c.kdaLayerCount() < m_c.layers;
    if (hasMla && int64_t(state.pos) + int64_t(tokens.size()) > state.ctx)
        throw Error(ErrorCode::Argument, "context of " + std::to_string(state.ctx) + " tokens is full at position " +
                                             std::to_string(state.pos) + " (asked for " + std::to_string(tokens.size()) +
                                             " more); reset the session or open with a larger context");
    const size_t pass = size_t(std::max(1, kind == Tokens::Generated ? std::min(passTokens, kMaxChunk) : passTokens));
    for (size_t c0 = 0; c0 < tokens.size(); c0 += pass) {
        const int n = static_cast<int>(std::min(pass, tokens.size() - c0));
        // Cancel between passes only: a pass either runs whole or not at all, so the
        // session state is never left half-updated.
        if (cancel && cancel->load(std::memory_order_relaxed))
            throw Error(ErrorCode::Cancelled, "cancelled");
        const Part whole{&state, n};
        runParts(tokens.subspan(c0, static_cast<size_t>(n)), std::span<const Part>(&whole, 1), experts, kind);
    }
}

void Forward::runParts(std::span<const int32_t> tokens, std::span<const Part> parts, ExpertSource &experts,
                       Tokens kind)
{
    const int64_t Hd = m_c.hidden;
    const int n = static_cast<int>(tokens.size());
    int counted = 0;
    for (const Part &p : parts)
        counted += p.count;
    if (counted != n || (kind == Tokens::Generated && n > kMaxChunk) || n == 0)
        throw Error(ErrorCode::Argument, "a chunk of " + std::to_string(n) + " tokens (generated: at most " +
                                             std::to_string(kMaxChunk) + ") split into parts of " +
                                             std::to_string(counted) + " tokens in all");
    // Which kernels every product of this pass uses; reset however the pass ends.
    struct PromptPass {
        Forward &f;
        ~PromptPass()
        {
            f.m_prompt = false;
            for (Vec &v : f.m_passScratch)
                Vec().swap(v); // the pass's pages go back: they were lent out of the cache
            f.m_mlaExpanded = false;
            f.m_mlaKv.reset();
            f.m_mlaKvLayer = -1;
        }
    } promptPass{*this};
    m_prompt = kind == Tokens::Prompt;
    // MLA's form for the whole pass, the same at every layer (model/mla_form.hpp).
    if (m_prompt && parts.size() == 1 && m_mlaForm != MlaForm::Absorbed && mlaExpandBytes(1) > 0) {
        const int64_t first = parts[0].state->pos, end = first + n;
        m_mlaExpanded = m_mlaForm == MlaForm::Expanded ||
                        (mlaExpandBytes(end) <= m_mlaExpandRoom && mlaExpands(first, n));
        if (m_mlaExpanded)
            m_mlaKv.reset(new float[size_t(mlaExpandBytes(end) / 4)]); // each row written before it is read
    }
    if (m_prompt)
        m_mlaExpandedLast = m_mlaExpanded;
    m_selection.clear();
    Vec h(static_cast<size_t>(n * Hd), 0.0f);
    for (int t = 0; t < n; ++t)
        if (!m_media || !m_media->take(tokens[static_cast<size_t>(t)], h.data() + t * Hd)) // image rows first
            embed(tokens[static_cast<size_t>(t)], h.data() + t * Hd);
    // Decode steps predict ahead (see m_lookaheadRows): one token of each part.
    // (Not on DeepSeek V4, whose stream the lookahead does not model.)
    bool decode = experts.lookaheadWidth() > 0 && kind == Tokens::Generated && !m_c.v4.on;
    for (const Part &p : parts)
        decode = decode && p.count == 1;
    m_lookaheadRows = decode ? n : 0;
    if (decode)
        lookaheadFirst(n, h.data(), experts);
    m_tokens = tokens.data();
    if (m_c.v4.on)
        runHyper(n, h.data(), parts, experts);
    else if (m_c.attnResBlock > 0)
        runAttnRes(n, h.data(), parts, experts);
    else
        runResidual(n, h.data(), parts, experts);
    // Each part's last row through the final norm, then the head for all parts in one pass.
    const int64_t P = static_cast<int64_t>(parts.size()), V = m_c.vocab;
    int64_t end = 0;
    Vec x(static_cast<size_t>(P * Hd));
    for (int64_t i = 0; i < P; ++i) {
        const Part &p = parts[static_cast<size_t>(i)];
        end += p.count;
        p.state->pos += p.count;
        rmsNorm(h.data() + (end - 1) * Hd, m_w.norm->f32.data(), x.data() + i * Hd, Hd, m_c.eps);
        p.state->lastLogits.resize(static_cast<size_t>(V));
    }
    if (P == 1) {
        quant::matvec(*m_w.head, x.data(), parts[0].state->lastLogits.data(), m_pool);
        return;
    }
    Vec logits(static_cast<size_t>(P * V));
    quant::matvecs(*m_w.head, P, x.data(), Hd, logits.data(), V, m_pool);
    for (int64_t i = 0; i < P; ++i)
        std::copy(logits.begin() + i * V, logits.begin() + (i + 1) * V, parts[static_cast<size_t>(i)].state->lastLogits.begin());
}

} // namespace waste::model
