// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5.x;
// docs/architectures/dsa.md): per token, Hi query heads from the normed q latent, one key
// (LayerNorm with bias, eps 1e-6), RoPE on the first qk_rope_head_dim dims of both (pairs
// (i, i + dr/2) on DeepSeek-V3.2, (2i, 2i+1) on GLM-5), per-head weights, and the score of
// each earlier key Σ_h w_h·Hi^−½·Di^−½·relu(q_h·k). A query that sees more than index_topk
// keys keeps the index_topk best; below that it sees every key, so attention is exactly
// dense. Computed in f32 as transformers does: no Hadamard rotation and no FP8 (the
// rotation is orthonormal, so it leaves every q·k as it is; FP8 only approximates them);
// the scores by model/indexer_scores.hpp.
// Ties keep the earlier position, so the selection is one set whatever the threads.
#include "model/forward.hpp"
#include "model/indexer_scores.hpp"
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
    // one token per sequence), held for at most kGroup tokens at once (model/indexer_scores.hpp:
    // one token's scores never depend on the others').
    constexpr int64_t kGroup = 32;
    std::vector<std::vector<int32_t>> chosen(over.size());
    std::vector<float> scores;
    std::vector<int64_t> last;
    std::vector<int32_t> order;
    for (size_t g0 = 0; g0 < over.size();) {
        size_t g1 = g0 + 1;
        while (g1 < over.size() && int64_t(g1 - g0) < kGroup && st[over[g1]] == st[over[g0]] &&
               over[g1] == over[g1 - 1] + 1 && pos[over[g1]] > pos[over[g1 - 1]])
            ++g1;
        const int64_t count = int64_t(g1 - g0), span = int64_t(pos[over[g1 - 1]]) + 1; // keys the last one sees
        last.resize(size_t(count));
        for (int64_t m = 0; m < count; ++m)
            last[size_t(m)] = pos[over[g0 + size_t(m)]];
        const float *keys = st[over[g0]]->indexKeys.data();
        scores.assign(size_t(count * span), 0.0f);
        const IndexerQueries qs{q.data() + int64_t(over[g0]) * Hi * Di, hw.data() + int64_t(over[g0]) * Hi, Hi, Di,
                                count, last.data()};
        indexerScores(m_pool, qs, [keys, Di](int64_t t) { return keys + t * Di; }, scores.data(), span);
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
