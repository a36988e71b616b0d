// The MoE layer of a prompt's pass, expert-major. Every token of the pass is routed first;
// then each expert any token chose is read once (in id order, the reads running ahead:
// ExpertSource::fetchInOrder) and multiplied by all of its tokens at once: its gate and up
// matrices decoded panel by panel and run against the gathered inputs, the activation, then
// down (quant/panel_product.hpp). Each token adds its weighted expert outputs in increasing
// expert id, the order the records are handed over, so its sum depends on nothing but its
// own routing: not on the pass's other tokens, the read order, or the thread count.
#include "format/expert_record.hpp"
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/native_matvec.hpp"
#include "quant/panel_product.hpp"
#include "waste/waste.hpp"

#include <algorithm>

namespace waste::model {

void Forward::moePass(int layer, int n, const float *b, float *out, ExpertSource &experts, bool add)
{
    const MoeWeights &w = m_w.layers[static_cast<size_t>(layer)].moeW;
    const int64_t Hd = m_c.hidden, E = m_c.experts, K = m_c.topK, Im = m_c.moeInter;
    const int64_t W = m_c.expertWidth();
    const bool native = m_manifest.quant.isNative();
    const int S = m_manifest.quant.stages;
    const bool packed6 = m_manifest.quant.indexBits == 6;

    // Routing, a piece of the pass at a time (the router's logits are a piece's).
    std::vector<int> chosen(static_cast<size_t>(n * K));
    std::vector<float> weight(static_cast<size_t>(n * K));
    for (int s0 = 0; s0 < n; s0 += m_piece)
        route(layer, std::min(m_piece, n - s0), b + s0 * Hd, chosen.data() + s0 * K, weight.data() + s0 * K, s0);

    // Expert input: the normed hidden state itself, or its latent projection (K3).
    Vec latentIn;
    const float *xin = b;
    if (w.latentDown) {
        latentIn.resize(static_cast<size_t>(n * W));
        for (int s0 = 0; s0 < n; s0 += m_piece)
            product(*w.latentDown, std::min(m_piece, n - s0), b + s0 * Hd, Hd, latentIn.data() + s0 * W, W);
        xin = latentIn.data();
    }

    // Each expert's users (token, weight), tokens in order; the experts in id order.
    std::vector<std::vector<int>> tokensOf(static_cast<size_t>(E));
    std::vector<std::vector<float>> weightsOf(static_cast<size_t>(E));
    for (int t = 0; t < n; ++t)
        for (int64_t j = 0; j < K; ++j) {
            const int e = chosen[size_t(t * K + j)];
            tokensOf[size_t(e)].push_back(t);
            weightsOf[size_t(e)].push_back(weight[size_t(t * K + j)]);
        }
    std::vector<int> ids;
    size_t most = 0;
    for (int e = 0; e < E; ++e)
        if (!tokensOf[size_t(e)].empty()) {
            ids.push_back(e);
            most = std::max(most, tokensOf[size_t(e)].size());
        }

    // One expert's users at a time, at most a piece of them at once: their inputs gathered,
    // gate and up, the activation, down, each output weighted into its token's sum. The sums
    // are the output itself where the experts write the hidden size (no latent): from zero,
    // or (add) from the residual stream it holds.
    const size_t piece = std::min<size_t>(most, kPassPiece);
    Vec local; // each buffer written before it is read: the gathered inputs, the products
    float *x = passScratch(PassScratch::Experts, piece * size_t(2 * W + 2 * Im), local);
    float *g = x + piece * size_t(W), *u = g + piece * size_t(Im), *y = u + piece * size_t(Im);
    Vec latentAcc;
    float *acc = out;
    if (w.latentUp) {
        latentAcc.assign(static_cast<size_t>(n * W), 0.0f);
        acc = latentAcc.data();
    } else if (!add) {
        std::fill(out, out + n * Hd, 0.0f);
    }
    const ExpertSource::Consumer consume = [&](size_t index, const uint8_t *rec) {
        const int e = ids[index];
        const std::vector<int> &ts = tokensOf[size_t(e)];
        const std::vector<float> &ws = weightsOf[size_t(e)];
        quant::PanelMatrix gate, up, down;
        if (native) {
            const uint8_t fmt = m_manifest.quant.native;
            gate = quant::nativePanels(quant::nativeMatrix(fmt, rec, m_nativeLayout, 0, Im, W));
            up = quant::nativePanels(quant::nativeMatrix(fmt, rec, m_nativeLayout, 1, Im, W));
            down = quant::nativePanels(quant::nativeMatrix(fmt, rec, m_nativeLayout, 2, Im, W));
        } else {
            const format::ExpertHeader h = format::parseExpertHeader(rec);
            const uint8_t *sc = rec + h.scaleOff;
            const int64_t cb = h.codebookId;
            gate = quant::vqPanels({rec + h.gateOff, sc, &m_books, cb, S, packed6, Im, W});
            up = quant::vqPanels({rec + h.upOff, sc + 2 * Im, &m_books, cb + S, S, packed6, Im, W});
            down = quant::vqPanels({rec + h.downOff, sc + 4 * Im, &m_books, cb + 2 * S, S, packed6, W, Im});
        }
        // The users' rows are split over the pool between the products too: each is its own
        // token's (an expert is among a token's top-k once), so the split changes no sum.
        for (size_t i0 = 0; i0 < ts.size(); i0 += piece) {
            const int64_t T = int64_t(std::min(piece, ts.size() - i0));
            m_pool.forRange(T, m_pool.grainFor(T, W / 4), [&](int64_t r0, int64_t r1) {
                for (int64_t i = r0; i < r1; ++i) {
                    const float *src = xin + int64_t(ts[i0 + size_t(i)]) * W;
                    std::copy(src, src + W, x + i * W);
                }
            });
            const quant::PanelJob gateUp[] = {{&gate, x, W, g, Im}, {&up, x, W, u, Im}};
            quant::panelProducts(gateUp, T, m_pool);
            m_pool.forRange(T, m_pool.grainFor(T, 4 * Im), [&](int64_t r0, int64_t r1) {
                for (int64_t i = r0; i < r1; ++i) {
                    float *gi = g + i * Im, *ui = u + i * Im;
                    addExpertBias(layer, e, gi, ui); // gpt-oss only
                    activate(gi, ui, gi, Im);
                }
            });
            quant::panelProduct(down, T, g, Im, y, W, m_pool);
            m_pool.forRange(T, m_pool.grainFor(T, W / 2), [&](int64_t r0, int64_t r1) {
                for (int64_t i = r0; i < r1; ++i) {
                    float *yi = y + i * W;
                    addDownBias(layer, e, yi); // gpt-oss only
                    float *a = acc + int64_t(ts[i0 + size_t(i)]) * (w.latentUp ? W : Hd);
                    const float wi = ws[i0 + size_t(i)];
                    for (int64_t c = 0; c < W; ++c)
                        a[c] += wi * yi[c];
                }
            });
        }
    };
    experts.fetchInOrder(layer, ids, consume);

    // The end, a piece at a time: (K3) the latent norm and up-projection of the sums, then
    // the shared expert added to each token's output.
    const int64_t Ms = m_c.g.sharedInter > 0 ? m_c.g.sharedInter : Im * (m_c.sharedExperts > 1 ? m_c.sharedExperts : 1);
    Vec shared(w.shared.gate ? size_t(m_piece) * size_t(Hd) : 0);
    for (int s0 = 0; s0 < n; s0 += m_piece) {
        const int m = std::min(m_piece, n - s0);
        float *os = out + s0 * Hd;
        if (w.latentUp) {
            float *as = acc + s0 * W;
            if (w.latentNorm)
                for (int t = 0; t < m; ++t)
                    rmsNorm(as + t * W, w.latentNorm->f32.data(), as + t * W, W, m_c.eps);
            if (add) { // the up-projection into the shared buffer first, then onto the stream
                shared.resize(std::max(shared.size(), size_t(m_piece) * size_t(Hd)));
                product(*w.latentUp, m, as, W, shared.data(), Hd);
                for (int64_t i = 0; i < m * Hd; ++i)
                    os[i] += shared[size_t(i)];
            } else {
                product(*w.latentUp, m, as, W, os, Hd);
            }
        }
        if (w.shared.gate) {
            sharedExpert(w, m, b + s0 * Hd, shared.data(), Ms);
            for (int64_t i = 0; i < m * Hd; ++i)
                os[i] += shared[size_t(i)];
        }
    }
}

} // namespace waste::model
