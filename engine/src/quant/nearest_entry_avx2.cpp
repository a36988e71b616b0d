// The nearest-entry search with AVX2 and FMA: 8 vectors per register. Each lane runs the
// scalar definition (quant/nearest_entry.hpp) unchanged.
#include "quant/nearest_entry.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <limits>

#define WASTE_AVX2 __attribute__((target("avx2,fma")))

namespace waste::quant {
namespace {

constexpr int kLanes = 8;

WASTE_AVX2 __m256i liveMask(size_t count) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count < kLanes ? count : kLanes)), lane);
}

WASTE_AVX2 void search(const float *m2, const float *norm, int entries, const float *x, size_t n, int32_t *idx, float *part) {
    const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    const __m256i rows = _mm256_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56);
    for (size_t i = 0; i < n; i += kLanes) {
        const __m256i live = liveMask(n - i);
        const float *base = x + i * kNearestDim;
        // Lanes past the end gather nothing and stay zero; their results are not stored.
        __m256 xv[kNearestDim];
        for (int d = 0; d < kNearestDim; ++d)
            xv[d] = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, _mm256_add_epi32(rows, _mm256_set1_epi32(d)),
                                             _mm256_castsi256_ps(live), 4);
        __m256 best = inf;
        __m256i bestIdx = _mm256_setzero_si256();
        for (int c = 0; c < entries; ++c) {
            const float *m = m2 + static_cast<size_t>(c) * kNearestDim;
            __m256 a = _mm256_set1_ps(norm[c]);
            for (int d = 0; d < kNearestDim; ++d) a = _mm256_fmadd_ps(xv[d], _mm256_set1_ps(m[d]), a);
            const __m256 lt = _mm256_cmp_ps(a, best, _CMP_LT_OQ);
            best = _mm256_blendv_ps(best, a, lt);
            bestIdx = _mm256_castps_si256(
                _mm256_blendv_ps(_mm256_castsi256_ps(bestIdx), _mm256_castsi256_ps(_mm256_set1_epi32(c)), lt));
        }
        _mm256_maskstore_epi32(idx + i, live, bestIdx);
        if (part) _mm256_maskstore_ps(part + i, live, best);
    }
}

const NearestKernels kAvx2{search};

} // namespace

const NearestKernels *avx2Nearest() { return &kAvx2; }

} // namespace waste::quant

#else

namespace waste::quant {
const NearestKernels *avx2Nearest() { return nullptr; }
} // namespace waste::quant

#endif
