#include "model/flash_attention.hpp"

#include "quant/panel_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace waste::model {

void flashAttention(const AttentionQueries &queries, int64_t dk, const CachedRow &key, const CachedRow &value,
                    int64_t dv, float scale, const float *sink, float *out, int64_t outStride)
{
    constexpr int B = quant::kPanelRows; // positions a block
    const int m = queries.count;
    if (m <= 0)
        return;
    const float inf = std::numeric_limits<float>::infinity();
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
    for (int t = 0; t < m; ++t) {
        lo = std::min<int64_t>(lo, queries.first ? queries.first[t] : 0);
        hi = std::max<int64_t>(hi, queries.pos[t]);
    }
    const quant::PanelGemm gemm = quant::panelGemm();
    std::vector<float> keys(size_t(dk) * B), values(size_t(B) * B), z(size_t(m) * B), p(size_t(m) * B),
        part(size_t(m) * B), runMax(size_t(m), sink ? *sink : -inf), runSum(size_t(m), sink ? 1.0f : 0.0f);
    for (int t = 0; t < m; ++t)
        std::fill(out + t * outStride, out + t * outStride + dv, 0.0f);
    for (int64_t s0 = lo / B * B; s0 <= hi; s0 += B) {
        const int64_t inBlock = std::min<int64_t>(B, hi + 1 - s0); // positions written so far
        // The block's keys as a panel (k-major), positions past the last query's as 0.
        for (int64_t j = 0; j < B; ++j) {
            const float *kr = j < inBlock ? key(s0 + j) : nullptr;
            for (int64_t k = 0; k < dk; ++k)
                keys[size_t(k * B + j)] = kr ? kr[k] : 0.0f;
        }
        gemm(keys.data(), dk, queries.q, queries.stride, m, z.data(), B, B);
        // Each query's visible scores, its running maximum and sum, its weights p.
        bool any = false;
        for (int t = 0; t < m; ++t) {
            const int64_t first = queries.first ? queries.first[t] : 0, last = queries.pos[t];
            float *zt = z.data() + size_t(t) * B, *pt = p.data() + size_t(t) * B;
            float blockMax = -inf;
            for (int64_t j = 0; j < B; ++j) {
                const int64_t s = s0 + j;
                zt[j] = s >= first && s <= last ? zt[j] * scale : -inf;
                blockMax = std::max(blockMax, zt[j]);
            }
            if (blockMax == -inf) {
                std::fill(pt, pt + B, 0.0f);
                continue;
            }
            any = true;
            const float newMax = std::max(runMax[size_t(t)], blockMax);
            const float keep = std::exp(runMax[size_t(t)] - newMax);
            if (keep != 1.0f) {
                float *ot = out + t * outStride;
                for (int64_t c = 0; c < dv; ++c)
                    ot[c] *= keep;
                runSum[size_t(t)] *= keep;
            }
            for (int64_t j = 0; j < B; ++j) {
                pt[j] = zt[j] == -inf ? 0.0f : std::exp(zt[j] - newMax);
                runSum[size_t(t)] += pt[j];
            }
            runMax[size_t(t)] = newMax;
        }
        if (!any)
            continue;
        // The weighted values, 64 of their dims at a time.
        for (int64_t c0 = 0; c0 < dv; c0 += B) {
            const int64_t width = std::min<int64_t>(B, dv - c0);
            for (int64_t j = 0; j < B; ++j) {
                const float *vr = j < inBlock ? value(s0 + j) : nullptr;
                for (int64_t c = 0; c < B; ++c)
                    values[size_t(j * B + c)] = vr && c < width ? vr[c0 + c] : 0.0f;
            }
            gemm(values.data(), B, p.data(), B, m, part.data(), B, width);
            for (int t = 0; t < m; ++t) {
                float *ot = out + t * outStride + c0;
                const float *pt = part.data() + size_t(t) * B;
                for (int64_t c = 0; c < width; ++c)
                    ot[c] += pt[c];
            }
        }
    }
    for (int t = 0; t < m; ++t) {
        float *ot = out + t * outStride;
        const float total = runSum[size_t(t)];
        for (int64_t c = 0; c < dv; ++c)
            ot[c] /= total;
    }
}

} // namespace waste::model
