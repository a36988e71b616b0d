#include "model/forward.hpp"

#include "model/attn_res.hpp"
#include "model/ops.hpp"
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
    const char *act = std::getenv("WASTE_NATIVE_ACTIVATIONS");
    m_int8Activations = manifest.quant.native == format::kFmtMXFP4 && act && std::string_view(act) == "int8";
}

void Forward::embed(int32_t token, float *out) const { m_w.embed->readRow(token, out); }

// The attention sub-layer for n tokens at positions pos0.. (strictly in order).
void Forward::attention(int layer, int n, const float *a, float *out, LayerState &st, int pos0)
{
    std::vector<LayerState *> states(static_cast<size_t>(n), &st);
    std::vector<int> pos(static_cast<size_t>(n));
    for (int t = 0; t < n; ++t)
        pos[static_cast<size_t>(t)] = pos0 + t;
    attentionTokens(layer, n, a, out, states.data(), pos.data());
}

// Token t of the chunk against *st[t] at position pos[t]: KDA and MLA take the chunk whole
// (their projections then read each matrix once), GQA token by token.
void Forward::attentionTokens(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos)
{
    const int64_t Hd = m_c.hidden;
    if (m_c.g.next && m_w.layers[static_cast<size_t>(layer)].kda) {
        // Qwen3-Next's Gated DeltaNet layers, token by token against each token's own state.
        for (int t = 0; t < n; ++t)
            gatedDeltaNet(layer, a + t * Hd, out + t * Hd, *st[t]);
    } else if (m_c.g.on) {
        for (int t = 0; t < n; ++t)
            gqa(layer, a + t * Hd, out + t * Hd, *st[t], pos[t]);
    } else if (m_w.layers[static_cast<size_t>(layer)].kda) {
        kda(layer, n, a, out, st);
    } else {
        mla(layer, n, a, out, st, pos);
    }
}

void Forward::feedForward(int layer, int n, const float *b, float *out, ExpertSource &experts)
{
    const LayerWeights &lw = m_w.layers[static_cast<size_t>(layer)];
    if (lw.moe) {
        moe(layer, n, b, out, experts);
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

// Kimi-Linear's plain residual stream: h += attn(norm h); h += ffn(norm h).
void Forward::runResidual(int n, float *h, std::span<const Part> parts, ExpertSource &experts)
{
    const int64_t Hd = m_c.hidden;
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
        attentionParts(L, a.data(), r.data(), parts);
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
    }
    for (int t = 0; t < n; ++t)
        attnResMix(R[t], x.data() + t * Hd, m_w.outResNorm->f32.data(), m_w.outResProj->f32.data(), h + t * Hd, Hd,
                   m_c.eps);
}

void Forward::run(std::span<const int32_t> tokens, State &state, ExpertSource &experts, const std::atomic<bool> *cancel)
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
    for (size_t c0 = 0; c0 < tokens.size(); c0 += kMaxChunk) {
        const int n = static_cast<int>(std::min<size_t>(kMaxChunk, tokens.size() - c0));
        // Cancel between chunks only: a chunk either runs whole or not at all, so the
        // session state is never left half-updated.
        if (cancel && cancel->load(std::memory_order_relaxed))
            throw Error(ErrorCode::Cancelled, "cancelled");
        const Part whole{&state, n};
        runParts(tokens.subspan(c0, static_cast<size_t>(n)), std::span<const Part>(&whole, 1), experts);
    }
}

void Forward::runParts(std::span<const int32_t> tokens, std::span<const Part> parts, ExpertSource &experts)
{
    const int64_t Hd = m_c.hidden;
    const int n = static_cast<int>(tokens.size());
    int counted = 0;
    for (const Part &p : parts)
        counted += p.count;
    if (counted != n || n > kMaxChunk || n == 0)
        throw Error(ErrorCode::Argument, "a chunk of " + std::to_string(n) + " tokens (at most " +
                                             std::to_string(kMaxChunk) + ") split into parts of " +
                                             std::to_string(counted) + " tokens in all");
    Vec h(static_cast<size_t>(n * Hd), 0.0f);
    for (int t = 0; t < n; ++t)
        if (!m_media || !m_media->take(tokens[static_cast<size_t>(t)], h.data() + t * Hd)) // image rows first
            embed(tokens[static_cast<size_t>(t)], h.data() + t * Hd);
    // Decode steps predict ahead (see m_lookaheadRows): one token of each part.
    bool decode = experts.lookaheadWidth() > 0;
    for (const Part &p : parts)
        decode = decode && p.count == 1;
    m_lookaheadRows = decode ? n : 0;
    if (decode)
        lookaheadFirst(n, h.data(), experts);
    if (m_c.attnResBlock > 0)
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
