// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5.x;
// docs/architectures/dsa.md): per token, Hi query heads from the normed q latent, one key
// (LayerNorm with bias, eps 1e-6), RoPE on the first qk_rope_head_dim dims of both (pairs
// (i, i + dr/2) on DeepSeek-V3.2, (2i, 2i+1) on GLM-5), per-head weights, and the score of
// each earlier key Σ_h w_h·Hi^−½·Di^−½·relu(q_h·k). A query that sees more than index_topk
// keys keeps the index_topk best; below that it sees every key, so attention is exactly
// dense. Computed in f32 as transformers does: no Hadamard rotation and no FP8 (the
// rotation is orthonormal, so it leaves every q·k as it is; FP8 only approximates them);
// each q·k by the panel kernel, a block of 64 keys against every head at once.
// Ties keep the earlier position, so the selection is one set whatever the threads.
#include "model/forward.hpp"
#include "quant/panel_gemm.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

namespace {

// x ← LayerNorm(x) · w + b over n values (torch's biased variance), f32 in and out.
void layerNorm(float *x, const float *w, const float *b, int64_t n, double eps)
{
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; ++i)
        mean += x[i];
    mean /= double(n);
    for (int64_t i = 0; i < n; ++i)
        var += (x[i] - mean) * (x[i] - mean);
    const double inv = 1.0 / std::sqrt(var / double(n) + eps);
    for (int64_t i = 0; i < n; ++i)
        x[i] = static_cast<float>((x[i] - mean) * inv) * w[i] + b[i];
}

} // namespace

// The indexer's rotation of its first 2·invFreq.size() dims at `pos`: the MLA's frequencies
// (YaRN-blended on DeepSeek-V3.2), cos/sin unscaled (DeepSeek's precompute_freqs_cis).
void Forward::rotateIndexer(float *x, int pos) const
{
    const std::vector<double> &f = m_rope.invFreq();
    const size_t half = f.size();
    for (size_t i = 0; i < half; ++i) {
        const double a = static_cast<double>(pos) * f[i];
        const float c = static_cast<float>(std::cos(a)), s = static_cast<float>(std::sin(a));
        const size_t i0 = m_c.dsa.ropeInterleave ? 2 * i : i, i1 = m_c.dsa.ropeInterleave ? 2 * i + 1 : i + half;
        const float x0 = x[i0], x1 = x[i1];
        x[i0] = x0 * c - x1 * s;
        x[i1] = x1 * c + x0 * s;
    }
}

void Forward::indexer(int layer, int n, const float *a, const float *cq, LayerState *const *st, const int *pos)
{
    const IndexerWeights &w = m_w.layers[static_cast<size_t>(layer)].m.idx;
    const int64_t Hi = m_c.dsa.heads, Di = m_c.dsa.headDim, Hd = m_c.hidden, ql = m_c.qLora, K = m_c.dsa.topk;
    Vec q(size_t(n * Hi * Di)), k(size_t(n * Di)), hw(size_t(n * Hi));
    {
        const quant::Product in[] = {{w.wk.get(), a, Hd, k.data(), Di}, {w.headWeights.get(), a, Hd, hw.data(), Hi}};
        products(in, n);
    }
    product(*w.wqb, n, cq, ql, q.data(), Hi * Di);
    const float headScale = static_cast<float>(1.0 / std::sqrt(double(Hi) * double(Di)));
    // Every token's key first: a token scores the keys of the chunk's earlier tokens too.
    for (int i = 0; i < n; ++i) {
        float *ki = k.data() + i * Di;
        layerNorm(ki, w.kNorm->f32.data(), w.kNormBias->f32.data(), Di, 1e-6);
        rotateIndexer(ki, pos[i]);
        std::copy(ki, ki + Di, st[i]->indexKeys.data() + int64_t(pos[i]) * Di);
        for (int64_t h = 0; h < Hi; ++h)
            rotateIndexer(q.data() + (i * Hi + h) * Di, pos[i]);
        for (int64_t h = 0; h < Hi; ++h)
            hw[size_t(i * Hi + h)] *= headScale;
    }
    // Tokens that see more than K keys: score them all, keep the K best.
    std::vector<int> over;
    for (int i = 0; i < n; ++i)
        if (int64_t(pos[i]) + 1 > K)
            over.push_back(i);
    if (over.empty())
        return;
    // The scores of each run of tokens that share a state (a pass: one run; a batched step:
    // one token per sequence), key block by key block: a block of 64 keys is one panel, and
    // every head of every token of the run that sees the block is multiplied against it
    // (quant/panel_gemm.hpp: each q·k one fma chain in the order of the dims, the same bit
    // for bit whatever the level, the tokens beside it or the split over threads). A score
    // then adds the heads in order: one token's scores never depend on the others'.
    constexpr int64_t kGroup = 32; // tokens scored together: their scores held at once
    const quant::PanelGemm gemm = quant::panelGemm();
    std::vector<std::vector<int32_t>> chosen(over.size());
    std::vector<float> scores;
    std::vector<int32_t> order;
    for (size_t g0 = 0; g0 < over.size();) {
        size_t g1 = g0 + 1;
        while (g1 < over.size() && int64_t(g1 - g0) < kGroup && st[over[g1]] == st[over[g0]] &&
               over[g1] == over[g1 - 1] + 1 && pos[over[g1]] > pos[over[g1 - 1]])
            ++g1;
        const int64_t count = int64_t(g1 - g0), span = int64_t(pos[over[g1 - 1]]) + 1; // keys the last one sees
        const float *keys = st[over[g0]]->indexKeys.data();
        scores.assign(size_t(count * span), 0.0f);
        const int64_t blocks = (span + quant::kPanelRows - 1) / quant::kPanelRows;
        m_pool.forRange(blocks, m_pool.grainFor(blocks, count * Hi * Di * quant::kPanelRows / 4), [&](int64_t b0, int64_t b1) {
            std::vector<float> panel(size_t(Di * quant::kPanelRows)), dots(size_t(count * Hi * quant::kPanelRows));
            for (int64_t blk = b0; blk < b1; ++blk) {
                const int64_t t0 = blk * quant::kPanelRows, valid = std::min<int64_t>(quant::kPanelRows, span - t0);
                for (int64_t j = 0; j < valid; ++j)
                    for (int64_t c = 0; c < Di; ++c)
                        panel[size_t(c * quant::kPanelRows + j)] = keys[(t0 + j) * Di + c];
                // The run's tokens that see this block are its last ones (positions ascend).
                int64_t first = 0;
                while (int64_t(pos[over[g0 + size_t(first)]]) < t0)
                    ++first;
                const int i0 = over[g0 + size_t(first)];
                gemm(panel.data(), Di, q.data() + int64_t(i0) * Hi * Di, Di, (count - first) * Hi, dots.data(),
                     quant::kPanelRows, valid);
                for (int64_t m = first; m < count; ++m) {
                    const int i = over[g0 + size_t(m)];
                    const float *wi = hw.data() + int64_t(i) * Hi;
                    const float *dm = dots.data() + (m - first) * Hi * quant::kPanelRows;
                    const int64_t seen = std::min<int64_t>(valid, int64_t(pos[i]) + 1 - t0);
                    for (int64_t j = 0; j < seen; ++j) {
                        float sum = 0.0f;
                        for (int64_t h = 0; h < Hi; ++h)
                            sum += wi[h] * std::max(dm[h * quant::kPanelRows + j], 0.0f);
                        scores[size_t(m * span + t0 + j)] = sum;
                    }
                }
            }
        });
        for (int64_t m = 0; m < count; ++m) {
            const size_t j = g0 + size_t(m);
            const int64_t visible = int64_t(pos[over[j]]) + 1;
            const float *score = scores.data() + m * span;
            order.resize(size_t(visible));
            for (int64_t t = 0; t < visible; ++t)
                order[size_t(t)] = int32_t(t);
            const auto better = [&](int32_t x, int32_t y) {
                return score[x] > score[y] || (score[x] == score[y] && x < y);
            };
            std::nth_element(order.begin(), order.begin() + (K - 1), order.end(), better);
            chosen[j].assign(order.begin(), order.begin() + K);
            std::sort(chosen[j].begin(), chosen[j].end());
        }
        g0 = g1;
    }
    for (size_t j = 0; j < over.size(); ++j) {
        const int i = over[j];
        m_selection[{st[i] - layer, pos[i]}] = {layer, std::move(chosen[j])};
    }
}

const std::vector<int32_t> *Forward::selection(int layer, const LayerState *st, int pos) const
{
    if (!m_c.dsa.on || int64_t(pos) + 1 <= m_c.dsa.topk)
        return nullptr;
    const auto it = m_selection.find({st - layer, pos});
    const int from = m_c.dsa.indexerLayer(layer);
    if (it == m_selection.end() || it->second.layer != from)
        throw Error(ErrorCode::Format, "DSA layer " + std::to_string(layer) + " at position " + std::to_string(pos) +
                                             " has no selection from its indexer layer " + std::to_string(from) + " (an engine bug)");
    return &it->second.positions;
}

} // namespace waste::model
