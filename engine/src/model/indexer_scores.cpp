#include "model/indexer_scores.hpp"

#include "quant/panel_gemm.hpp"

#include <algorithm>
#include <vector>

namespace waste::model {

void indexerScores(compute::ThreadPool &pool, const IndexerQueries &qs, const IndexerKey &key, float *scores,
                   int64_t stride)
{
    constexpr int64_t B = quant::kPanelRows;
    if (qs.count <= 0)
        return;
    const int64_t H = qs.heads, D = qs.dim, span = qs.last[qs.count - 1] + 1;
    const int64_t blocks = (span + B - 1) / B;
    const quant::PanelGemm gemm = quant::panelGemm();
    pool.forRange(blocks, pool.grainFor(blocks, qs.count * H * D * B / 4), [&](int64_t b0, int64_t b1) {
        std::vector<float> panel(size_t(D * B)), dots(size_t(qs.count * H * B));
        for (int64_t blk = b0; blk < b1; ++blk) {
            const int64_t t0 = blk * B, valid = std::min(B, span - t0);
            for (int64_t j = 0; j < valid; ++j) {
                const float *k = key(t0 + j);
                for (int64_t c = 0; c < D; ++c)
                    panel[size_t(c * B + j)] = k[c];
            }
            // The queries that see this block are the last ones (what they see ascends).
            int64_t first = 0;
            while (qs.last[first] < t0)
                ++first;
            gemm(panel.data(), D, qs.q + first * H * D, D, (qs.count - first) * H, dots.data(), B, valid);
            for (int64_t m = first; m < qs.count; ++m) {
                const float *w = qs.weights + m * H, *dm = dots.data() + (m - first) * H * B;
                const int64_t seen = std::min(valid, qs.last[m] + 1 - t0);
                for (int64_t j = 0; j < seen; ++j) {
                    float sum = 0.0f;
                    for (int64_t h = 0; h < H; ++h)
                        sum += w[h] * std::max(dm[h * B + j], 0.0f);
                    scores[m * stride + t0 + j] = sum;
                }
            }
        }
    });
}

} // namespace waste::model
