#include "convert/vq.hpp"

#include "convert/parallel.hpp"
#include "convert/random.hpp"
#include "format/f16.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace waste::convert {

NearestSearch::NearestSearch(const std::vector<float> &centroids, int entries, int dim, int maxSimd)
    : m_entries(entries), m_dim(dim), m_simd(maxSimd), m_m2(static_cast<size_t>(entries) * dim), m_norm(entries) {
    for (int c = 0; c < entries; ++c) {
        float n = 0.0f;
        for (int d = 0; d < dim; ++d) {
            const float v = centroids[static_cast<size_t>(c) * dim + d];
            m_m2[static_cast<size_t>(d) * entries + c] = -2.0f * v;
            n += v * v;
        }
        m_norm[c] = n;
    }
}

namespace {

#if defined(__clang__)
#define WASTE_NO_FP_CONTRACT // clang keeps -ffp-contract=on (same statement only): separate statements never fuse
#else
#define WASTE_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#endif

// Distances are computed as |c|^2 - 2 x.c in the same order (d = 0..7, a separately
// rounded multiply then add) in every kernel, so the SIMD and scalar paths pick the
// same entries bit for bit; ties go to the lowest entry.
WASTE_NO_FP_CONTRACT int nearestScalar(const float *m2, const float *norm, int k, int dim, const float *x, float *bestOut) {
    float acc[256];
    std::memcpy(acc, norm, sizeof(float) * static_cast<size_t>(k));
    for (int d = 0; d < dim; ++d) {
        const float xd = x[d];
        const float *m = m2 + static_cast<size_t>(d) * k;
        for (int c = 0; c < k; ++c) {
            const float p = xd * m[c];
            acc[c] = acc[c] + p;
        }
    }
    int best = 0;
    float bestValue = acc[0];
    for (int c = 1; c < k; ++c)
        if (acc[c] < bestValue) { bestValue = acc[c]; best = c; }
    *bestOut = bestValue;
    return best;
}

#if defined(__x86_64__)
// 256 entries x 8 dims with AVX2 (no FMA, so rounding matches the scalar kernel).
__attribute__((target("avx2"))) WASTE_NO_FP_CONTRACT int nearestAvx2(const float *m2, const float *norm, const float *x, float *bestOut) {
    __m256 xd[8];
    for (int d = 0; d < 8; ++d) xd[d] = _mm256_set1_ps(x[d]);
    __m256 bestV = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    __m256i bestI = _mm256_setzero_si256();
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step = _mm256_set1_epi32(8);
    for (int c = 0; c < 256; c += 8) {
        __m256 acc = _mm256_loadu_ps(norm + c);
        for (int d = 0; d < 8; ++d) {
            const __m256 p = _mm256_mul_ps(xd[d], _mm256_loadu_ps(m2 + d * 256 + c));
            acc = _mm256_add_ps(acc, p);
        }
        const __m256 lt = _mm256_cmp_ps(acc, bestV, _CMP_LT_OQ);
        bestV = _mm256_blendv_ps(bestV, acc, lt);
        bestI = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(bestI), _mm256_castsi256_ps(idx), lt));
        idx = _mm256_add_epi32(idx, step);
    }
    alignas(32) float v[8];
    alignas(32) int32_t i[8];
    _mm256_store_ps(v, bestV);
    _mm256_store_si256(reinterpret_cast<__m256i *>(i), bestI);
    int best = i[0];
    float bestValue = v[0];
    for (int l = 1; l < 8; ++l)
        if (v[l] < bestValue || (v[l] == bestValue && i[l] < best)) { bestValue = v[l]; best = i[l]; }
    *bestOut = bestValue;
    return best;
}

// The same with AVX-512F, 16 entries per step.
// fp-contract off: a fused multiply-add would round differently from the other kernels.
__attribute__((target("avx512f"))) WASTE_NO_FP_CONTRACT int nearestAvx512(const float *m2, const float *norm, const float *x, float *bestOut) {
    __m512 xd[8];
    for (int d = 0; d < 8; ++d) xd[d] = _mm512_set1_ps(x[d]);
    __m512 bestV = _mm512_set1_ps(std::numeric_limits<float>::infinity());
    __m512i bestI = _mm512_setzero_si512();
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i step = _mm512_set1_epi32(16);
    for (int c = 0; c < 256; c += 16) {
        __m512 acc = _mm512_loadu_ps(norm + c);
        for (int d = 0; d < 8; ++d) {
            const __m512 p = _mm512_mul_ps(xd[d], _mm512_loadu_ps(m2 + d * 256 + c));
            acc = _mm512_add_ps(acc, p);
        }
        const __mmask16 lt = _mm512_cmp_ps_mask(acc, bestV, _CMP_LT_OQ);
        bestV = _mm512_mask_blend_ps(lt, bestV, acc);
        bestI = _mm512_mask_blend_epi32(lt, bestI, idx);
        idx = _mm512_add_epi32(idx, step);
    }
    alignas(64) float v[16];
    alignas(64) int32_t i[16];
    _mm512_store_ps(v, bestV);
    _mm512_store_si512(i, bestI);
    int best = i[0];
    float bestValue = v[0];
    for (int l = 1; l < 16; ++l)
        if (v[l] < bestValue || (v[l] == bestValue && i[l] < best)) { bestValue = v[l]; best = i[l]; }
    *bestOut = bestValue;
    return best;
}

bool haveAvx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

bool haveAvx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
#endif

} // namespace

int NearestSearch::nearest(const float *x, float *distance) const {
    float bestValue = 0.0f;
    int best;
#if defined(__x86_64__)
    if (m_simd >= 2 && m_entries == 256 && m_dim == 8 && haveAvx512()) best = nearestAvx512(m_m2.data(), m_norm.data(), x, &bestValue);
    else if (m_simd >= 1 && m_entries == 256 && m_dim == 8 && haveAvx2()) best = nearestAvx2(m_m2.data(), m_norm.data(), x, &bestValue);
    else
#endif
        best = nearestScalar(m_m2.data(), m_norm.data(), m_entries, m_dim, x, &bestValue);
    if (distance) {
        float xx = 0.0f;
        for (int d = 0; d < m_dim; ++d) xx += x[d] * x[d];
        *distance = std::max(0.0f, bestValue + xx);
    }
    return best;
}

namespace {

constexpr size_t kChunk = 4096; // vectors per work item: fixed, so sums reduce in a fixed order

std::vector<float> kmeans(const float *x, size_t count, int k, int dim, int iterations, int threads, uint64_t seed) {
    std::vector<float> centroids(static_cast<size_t>(k) * dim, 0.0f);
    if (count == 0) return centroids;
    // Initial centroids: k distinct training vectors picked by a seeded partial shuffle.
    {
        std::vector<uint32_t> order(count);
        std::iota(order.begin(), order.end(), 0u);
        Rng rng(seed);
        const size_t picks = std::min<size_t>(static_cast<size_t>(k), count);
        for (size_t i = 0; i < picks; ++i) std::swap(order[i], order[i + rng.below(count - i)]);
        for (int c = 0; c < k; ++c) {
            const size_t src = order[static_cast<size_t>(c) % picks];
            std::memcpy(&centroids[static_cast<size_t>(c) * dim], x + src * dim, sizeof(float) * dim);
        }
    }
    const size_t chunks = (count + kChunk - 1) / kChunk;
    std::vector<float> dist(count);
    std::vector<double> sums(chunks * static_cast<size_t>(k) * dim);
    std::vector<uint32_t> counts(chunks * static_cast<size_t>(k));
    for (int it = 0; it < iterations; ++it) {
        const NearestSearch search(centroids, k, dim);
        std::fill(sums.begin(), sums.end(), 0.0);
        std::fill(counts.begin(), counts.end(), 0u);
        parallelFor(chunks, threads, [&](size_t ch) {
            double *s = &sums[ch * static_cast<size_t>(k) * dim];
            uint32_t *n = &counts[ch * static_cast<size_t>(k)];
            const size_t b = ch * kChunk, e = std::min(count, b + kChunk);
            for (size_t i = b; i < e; ++i) {
                const int c = search.nearest(x + i * dim, &dist[i]);
                ++n[c];
                for (int d = 0; d < dim; ++d) s[static_cast<size_t>(c) * dim + d] += x[i * dim + d];
            }
        });
        std::vector<double> total(static_cast<size_t>(k) * dim, 0.0);
        std::vector<uint64_t> totalCount(k, 0);
        for (size_t ch = 0; ch < chunks; ++ch) {
            for (size_t j = 0; j < total.size(); ++j) total[j] += sums[ch * total.size() + j];
            for (int c = 0; c < k; ++c) totalCount[c] += counts[ch * k + c];
        }
        for (int c = 0; c < k; ++c) {
            float *dst = &centroids[static_cast<size_t>(c) * dim];
            if (totalCount[c] > 0) {
                for (int d = 0; d < dim; ++d)
                    dst[d] = static_cast<float>(total[static_cast<size_t>(c) * dim + d] / static_cast<double>(totalCount[c]));
            } else {
                // Empty cluster: move it onto the worst-served vector (lowest index on ties).
                size_t worst = 0;
                for (size_t i = 1; i < count; ++i)
                    if (dist[i] > dist[worst]) worst = i;
                std::memcpy(dst, x + worst * dim, sizeof(float) * dim);
                dist[worst] = -1.0f;
            }
        }
    }
    return centroids;
}

Codebook roundCodebook(const std::vector<float> &centroids) {
    Codebook cb;
    cb.half.resize(centroids.size());
    cb.value.resize(centroids.size());
    for (size_t i = 0; i < centroids.size(); ++i) {
        cb.half[i] = format::floatToF16FlushSubnormal(centroids[i]);
        cb.value[i] = format::f16ToFloat(cb.half[i]);
    }
    return cb;
}

} // namespace

std::vector<Codebook> fitResidualCodebooks(std::span<const float> vectors, const VqGeometry &geom,
                                           const KMeansOptions &options) {
    if (geom.entries < 1 || geom.entries > 256 || geom.dim < 1 || geom.stages < 1)
        throw Error(ErrorCode::Argument, "VQ geometry out of range (entries 1..256, dim >= 1, stages >= 1)");
    const size_t count = vectors.size() / static_cast<size_t>(geom.dim);
    std::vector<float> residual(vectors.begin(), vectors.begin() + static_cast<ptrdiff_t>(count * geom.dim));
    std::vector<Codebook> books;
    for (int s = 0; s < geom.stages; ++s) {
        const uint64_t stageSeed = mix64(options.seed ^ mix64(0x5354414745ull + static_cast<uint64_t>(s)));
        books.push_back(roundCodebook(
            kmeans(residual.data(), count, geom.entries, geom.dim, options.iterations, options.threads, stageSeed)));
        if (s + 1 == geom.stages) break;
        // The next stage learns what this one (as stored, in f16) leaves behind.
        const NearestSearch search(books.back().value, geom.entries, geom.dim);
        const size_t chunks = (count + kChunk - 1) / kChunk;
        parallelFor(chunks, options.threads, [&](size_t ch) {
            const size_t b = ch * kChunk, e = std::min(count, b + kChunk);
            for (size_t i = b; i < e; ++i) {
                float *v = &residual[i * geom.dim];
                const int c = search.nearest(v, nullptr);
                for (int d = 0; d < geom.dim; ++d) v[d] -= books.back().value[static_cast<size_t>(c) * geom.dim + d];
            }
        });
    }
    return books;
}

uint16_t rowScaleHalf(const float *row, int64_t n) {
    float amax = 0.0f;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(row[i]));
    if (!(amax > 0.0f)) return 0;
    uint16_t h = format::floatToF16(std::min(amax, 65504.0f));
    if (h == 0) h = 1; // smaller than the least f16: keep a nonzero scale
    return h;
}

void vqEncodeMatrix(const float *w, int64_t rows, int64_t cols, const std::vector<Codebook> &books,
                    const VqGeometry &geom, uint8_t *indices, uint16_t *scales) {
    if (cols % geom.dim != 0)
        throw Error(ErrorCode::Format, "expert matrix width " + std::to_string(cols) + " is not a multiple of the VQ vector size");
    const int64_t nv = cols / geom.dim, B = geom.block, S = geom.stages;
    std::memset(indices, 0, static_cast<size_t>(format::indexBytes(rows, cols, geom.stages, geom.indexBits)));
    std::vector<NearestSearch> search;
    for (const auto &b : books) search.emplace_back(b.value, geom.entries, geom.dim);
    std::vector<float> x(static_cast<size_t>(geom.dim));
    for (int64_t r = 0; r < rows; ++r) {
        const float *row = w + r * cols;
        const uint16_t h = rowScaleHalf(row, cols);
        scales[r] = h;
        const float scale = format::f16ToFloat(h);
        const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
        for (int64_t v = 0; v < nv; ++v) {
            for (int d = 0; d < geom.dim; ++d) x[d] = row[v * geom.dim + d] * inv;
            uint8_t *out = indices + (((r / B) * nv + v) * B + (r % B)) * S;
            for (int s = 0; s < S; ++s) {
                const int c = search[s].nearest(x.data(), nullptr);
                out[s] = static_cast<uint8_t>(c);
                const float *cv = &books[s].value[static_cast<size_t>(c) * geom.dim];
                for (int d = 0; d < geom.dim; ++d) x[d] -= cv[d];
            }
        }
    }
}

void vqDecodeMatrix(const uint8_t *indices, const uint16_t *scales, int64_t rows, int64_t cols,
                    const std::vector<Codebook> &books, const VqGeometry &geom, float *out) {
    const int64_t nv = cols / geom.dim, B = geom.block, S = geom.stages;
    for (int64_t r = 0; r < rows; ++r) {
        const float scale = format::f16ToFloat(scales[r]);
        for (int64_t v = 0; v < nv; ++v) {
            const uint8_t *idx = indices + (((r / B) * nv + v) * B + (r % B)) * S;
            for (int d = 0; d < geom.dim; ++d) {
                float sum = 0.0f;
                for (int s = 0; s < S; ++s) sum += books[s].value[static_cast<size_t>(idx[s]) * geom.dim + d];
                out[r * cols + v * geom.dim + d] = scale * sum;
            }
        }
    }
}

} // namespace waste::convert
