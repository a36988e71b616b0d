#include "model/forward.hpp"

#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"
#include "waste/waste.hpp"

#include <algorithm>

namespace waste::model {

Forward::Forward(const format::Manifest &manifest, const Weights &weights, const format::Codebooks &books)
    : m_manifest(manifest), m_c(manifest.config), m_w(weights), m_books(books)
{
}

void Forward::embed(int32_t token, float *out) const { m_w.embed->readRow(token, out); }

void Forward::run(std::span<const int32_t> tokens, State &state, ExpertSource &experts, const std::atomic<bool> *cancel)
{
    const int64_t Hd = m_c.hidden;
    for (int32_t t : tokens)
        if (t < 0 || t >= m_c.vocab)
            throw Error(ErrorCode::Argument, "token id " + std::to_string(t) + " is out of range [0, " +
                                                 std::to_string(m_c.vocab) + ")");
    const bool hasMla = m_c.kdaLayerCount() < m_c.layers;
    if (hasMla && int64_t(state.pos) + int64_t(tokens.size()) > state.ctx)
        throw Error(ErrorCode::Argument, "context of " + std::to_string(state.ctx) + " tokens is full at position " +
                                             std::to_string(state.pos) + " (asked for " + std::to_string(tokens.size()) +
                                             " more); reset the session or open with a larger context");
    Vec h, a, o;
    for (size_t c0 = 0; c0 < tokens.size(); c0 += kMaxChunk) {
        const int n = static_cast<int>(std::min<size_t>(kMaxChunk, tokens.size() - c0));
        h.assign(static_cast<size_t>(n * Hd), 0.0f);
        a.assign(static_cast<size_t>(n * Hd), 0.0f);
        o.assign(static_cast<size_t>(n * Hd), 0.0f);
        for (int t = 0; t < n; ++t)
            embed(tokens[c0 + t], h.data() + t * Hd);
        for (int L = 0; L < m_c.layers; ++L) {
            if (cancel && cancel->load(std::memory_order_relaxed))
                throw Error(ErrorCode::Cancelled, "cancelled");
            const LayerWeights &lw = m_w.layers[static_cast<size_t>(L)];
            LayerState &ls = state.layers[static_cast<size_t>(L)];
            for (int t = 0; t < n; ++t) {
                float *ht = h.data() + t * Hd;
                rmsNorm(ht, lw.inNorm->f32.data(), a.data() + t * Hd, Hd, m_c.eps);
                if (lw.kda)
                    kda(L, a.data() + t * Hd, o.data() + t * Hd, ls);
                else
                    mla(L, a.data() + t * Hd, o.data() + t * Hd, ls, state.pos + t);
                for (int64_t i = 0; i < Hd; ++i)
                    ht[i] = ht[i] + o[t * Hd + i];
            }
            for (int t = 0; t < n; ++t)
                rmsNorm(h.data() + t * Hd, lw.postNorm->f32.data(), a.data() + t * Hd, Hd, m_c.eps);
            if (lw.moe) {
                moe(L, n, a.data(), o.data(), experts);
            } else {
                for (int t = 0; t < n; ++t)
                    denseFfn(lw.dense, a.data() + t * Hd, o.data() + t * Hd, m_c.inter);
            }
            for (int64_t i = 0; i < n * Hd; ++i)
                h[i] = h[i] + o[i];
        }
        state.pos += n;
        if (c0 + n == tokens.size()) {
            const float *last = h.data() + (n - 1) * Hd;
            Vec x(Hd);
            rmsNorm(last, m_w.norm->f32.data(), x.data(), Hd, m_c.eps);
            state.lastLogits.resize(static_cast<size_t>(m_c.vocab));
            quant::matvec(*m_w.head, x.data(), state.lastLogits.data());
        }
    }
}

} // namespace waste::model
