// Mixture-of-experts layer over a chunk of tokens: sigmoid router, score-correction
// bias for selection only, top-k (ties to the lowest id), renormalisation, routed
// scaling, routed experts through lookup tables, plus the shared expert.
// Each expert record is fetched once per chunk; every token's sum is still formed in
// its own selection order, so a chunk equals the same tokens one at a time.
#include "format/expert_record.hpp"
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <map>

namespace waste::model {

void Forward::moe(int layer, int n, const float *b, float *out, ExpertSource &experts)
{
    const MoeWeights &w = m_w.layers[static_cast<size_t>(layer)].moeW;
    const int64_t Hd = m_c.hidden, E = m_c.experts, K = m_c.topK, Im = m_c.moeInter;
    const int64_t W = m_c.expertWidth();
    const int S = m_manifest.quant.stages;
    const bool vq4p = m_manifest.quant.indexBits == 6;

    // Routing per token.
    std::vector<int> chosen(static_cast<size_t>(n * K));
    std::vector<float> weight(static_cast<size_t>(n * K));
    Vec r(E), key(E);
    const float *bias = w.bias ? w.bias->f32.data() : nullptr;
    for (int t = 0; t < n; ++t) {
        quant::matvec(*w.router, b + t * Hd, r.data());
        for (int64_t e = 0; e < E; ++e) {
            r[e] = sigmoid(r[e]);
            key[e] = r[e] + (bias ? bias[e] : 0.0f);
        }
        std::vector<bool> taken(static_cast<size_t>(E), false);
        float sum = 0.0f;
        for (int64_t j = 0; j < K; ++j) {
            int64_t best = -1;
            for (int64_t e = 0; e < E; ++e)
                if (!taken[e] && (best < 0 || key[e] > key[best]))
                    best = e;
            taken[best] = true;
            chosen[t * K + j] = static_cast<int>(best);
            weight[t * K + j] = r[best];
            sum += r[best];
        }
        for (int64_t j = 0; j < K; ++j) {
            float &wj = weight[t * K + j];
            if (m_c.renormalize && K > 1)
                wj = wj / (sum + 1e-20f);
            wj = wj * m_c.routedScale;
        }
    }

    // Expert input: the hidden state, or its latent projection (K3).
    Vec xin(static_cast<size_t>(n * W));
    for (int t = 0; t < n; ++t) {
        if (w.latentDown)
            quant::matvec(*w.latentDown, b + t * Hd, xin.data() + t * W);
        else
            std::copy(b + t * Hd, b + t * Hd + W, xin.data() + t * W);
    }

    // Unique experts of the chunk, in first-use order, with their (token, slot) users.
    std::vector<int> ids;
    std::map<int, std::vector<int64_t>> users;
    for (int64_t i = 0; i < n * K; ++i) {
        auto &u = users[chosen[i]];
        if (u.empty())
            ids.push_back(chosen[i]);
        u.push_back(i);
    }

    Vec ys(static_cast<size_t>(n * K * W));
    if (static_cast<int>(m_gateLut.size()) < n) {
        m_gateLut.resize(static_cast<size_t>(n));
        m_upLut.resize(static_cast<size_t>(n));
    }
    bool lutsBuilt = false;
    Vec g(Im), u(Im);
    experts.fetch(layer, ids, [&](size_t idx, const uint8_t *rec) {
        const format::ExpertHeader h = format::parseExpertHeader(rec);
        const int64_t cb = h.codebookId;
        if (!lutsBuilt) { // gate/up tables: once per token and layer, books of the first record
            for (int t = 0; t < n; ++t) {
                quant::buildLut(m_gateLut[t], xin.data() + t * W, W, m_books, cb, S, vq4p);
                quant::buildLut(m_upLut[t], xin.data() + t * W, W, m_books, cb + S, S, vq4p);
            }
            lutsBuilt = true;
        }
        const uint8_t *sc = rec + h.scaleOff;
        for (int64_t slot : users[ids[idx]]) {
            const int t = static_cast<int>(slot / K);
            if (vq4p) {
                quant::applyLut4p(m_gateLut[t], rec + h.gateOff, sc, Im, g.data());
                quant::applyLut4p(m_upLut[t], rec + h.upOff, sc + 2 * Im, Im, u.data());
            } else {
                quant::applyLut8(m_gateLut[t], rec + h.gateOff, sc, Im, g.data());
                quant::applyLut8(m_upLut[t], rec + h.upOff, sc + 2 * Im, Im, u.data());
            }
            activate(g.data(), u.data(), g.data(), Im);
            quant::buildLut(m_downLut, g.data(), Im, m_books, cb + 2 * S, S, vq4p);
            float *y = ys.data() + slot * W;
            if (vq4p)
                quant::applyLut4p(m_downLut, rec + h.downOff, sc + 4 * Im, W, y);
            else
                quant::applyLut8(m_downLut, rec + h.downOff, sc + 4 * Im, W, y);
        }
    });

    const int64_t Ms = Im * (m_c.sharedExperts > 1 ? m_c.sharedExperts : 1);
    Vec acc(W), lat(W), shared(Hd);
    for (int t = 0; t < n; ++t) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j < K; ++j) {
            const float wj = weight[t * K + j];
            const float *y = ys.data() + (t * K + j) * W;
            for (int64_t i = 0; i < W; ++i)
                acc[i] += wj * y[i];
        }
        float *o = out + t * Hd;
        if (w.latentUp) {
            if (w.latentNorm)
                rmsNorm(acc.data(), w.latentNorm->f32.data(), acc.data(), W, m_c.eps);
            quant::matvec(*w.latentUp, acc.data(), o);
        } else {
            std::copy(acc.begin(), acc.end(), o);
        }
        denseFfn(w.shared, b + t * Hd, shared.data(), Ms);
        for (int64_t i = 0; i < Hd; ++i)
            o[i] += shared[i];
    }
}

} // namespace waste::model
