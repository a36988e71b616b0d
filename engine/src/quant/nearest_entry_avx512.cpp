// The nearest-entry search with AVX-512: 16 vectors per register, two registers (32
// vectors) per pass so that two independent chains of multiply-adds are in flight. Each
// lane runs the scalar definition (quant/nearest_entry.hpp) unchanged.
#include "quant/nearest_entry.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <limits>

#define WASTE_AVX512 __attribute__((target("avx512f,avx2,fma")))

namespace waste::quant {
namespace {

constexpr int kLanes = 16;

// Lanes of vectors [i0, i0 + count) as dims: out[d] lane l = x[(i0 + l) * 8 + d]; lanes
// past count hold zeros (their results are never stored).
WASTE_AVX512 void loadBlock(const float *x, size_t i0, size_t count, __m512 out[kNearestDim]) {
    const __mmask16 live = count >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << count) - 1u);
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(kNearestDim));
    const float *base = x + i0 * kNearestDim;
    for (int d = 0; d < kNearestDim; ++d)
        out[d] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, _mm512_add_epi32(rows, _mm512_set1_epi32(d)), base, 4);
}

// Blocks (1 or 2) registers of 16 vectors from i0 on; the last may be partial.
template <int Blocks>
WASTE_AVX512 inline void searchBlocks(const float *m2, const float *norm, int entries, const float *x, size_t i0, size_t n,
                                      int32_t *idx, float *part) {
    __m512 xv[Blocks][kNearestDim];
    size_t live[Blocks];
    for (int b = 0; b < Blocks; ++b) {
        const size_t at = i0 + static_cast<size_t>(b) * kLanes;
        live[b] = n - at < kLanes ? n - at : kLanes;
        loadBlock(x, at, live[b], xv[b]);
    }
    const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
    __m512 best[Blocks];
    __m512i bestIdx[Blocks];
    for (int b = 0; b < Blocks; ++b) {
        best[b] = inf;
        bestIdx[b] = _mm512_setzero_si512();
    }
    for (int c = 0; c < entries; ++c) {
        const float *m = m2 + static_cast<size_t>(c) * kNearestDim;
        __m512 acc[Blocks];
        for (int b = 0; b < Blocks; ++b) acc[b] = _mm512_set1_ps(norm[c]);
        for (int d = 0; d < kNearestDim; ++d) {
            const __m512 md = _mm512_set1_ps(m[d]);
            for (int b = 0; b < Blocks; ++b) acc[b] = _mm512_fmadd_ps(xv[b][d], md, acc[b]);
        }
        const __m512i cv = _mm512_set1_epi32(c);
        for (int b = 0; b < Blocks; ++b) {
            const __mmask16 lt = _mm512_cmp_ps_mask(acc[b], best[b], _CMP_LT_OQ);
            best[b] = _mm512_mask_mov_ps(best[b], lt, acc[b]);
            bestIdx[b] = _mm512_mask_mov_epi32(bestIdx[b], lt, cv);
        }
    }
    for (int b = 0; b < Blocks; ++b) {
        const size_t at = i0 + static_cast<size_t>(b) * kLanes;
        const __mmask16 mask = live[b] >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << live[b]) - 1u);
        _mm512_mask_storeu_epi32(idx + at, mask, bestIdx[b]);
        if (part) _mm512_mask_storeu_ps(part + at, mask, best[b]);
    }
}

WASTE_AVX512 void search(const float *m2, const float *norm, int entries, const float *x, size_t n, int32_t *idx, float *part) {
    size_t i = 0;
    for (; i + kLanes < n; i += 2 * kLanes) searchBlocks<2>(m2, norm, entries, x, i, n, idx, part);
    if (i < n) searchBlocks<1>(m2, norm, entries, x, i, n, idx, part);
}

const NearestKernels kAvx512{search};

} // namespace

const NearestKernels *avx512Nearest() { return &kAvx512; }

} // namespace waste::quant

#else

namespace waste::quant {
const NearestKernels *avx512Nearest() { return nullptr; }
} // namespace waste::quant

#endif
