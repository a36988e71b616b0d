// The panel product with AVX-512F: six inputs against the panel's 64 rows at a time (24
// accumulators of 16 rows), each output one fused multiply-add per term in order of k,
// as the scalar reference (quant/panel_gemm.hpp).
#include "quant/panel_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX512 __attribute__((target("avx512f")))

namespace waste::quant {
namespace {

template <int TT>
WASTE_AVX512 inline void tile(const float *panel, int64_t cols, const float *X, int64_t xStride, float *Y,
                              int64_t yStride, int64_t valid)
{
    __m512 acc[TT][4];
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t)
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            acc[t][i] = _mm512_setzero_ps();
    for (int64_t k = 0; k < cols; ++k) {
        const float *w = panel + k * kPanelRows;
        const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16), w2 = _mm512_loadu_ps(w + 32),
                     w3 = _mm512_loadu_ps(w + 48);
#pragma GCC unroll 8
        for (int t = 0; t < TT; ++t) {
            const __m512 x = _mm512_set1_ps(X[t * xStride + k]);
            acc[t][0] = _mm512_fmadd_ps(x, w0, acc[t][0]);
            acc[t][1] = _mm512_fmadd_ps(x, w1, acc[t][1]);
            acc[t][2] = _mm512_fmadd_ps(x, w2, acc[t][2]);
            acc[t][3] = _mm512_fmadd_ps(x, w3, acc[t][3]);
        }
    }
    for (int t = 0; t < TT; ++t) {
        float *y = Y + t * yStride;
        for (int i = 0; i < 4; ++i) {
            const int64_t left = valid - 16 * i;
            if (left <= 0)
                break;
            const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
            _mm512_mask_storeu_ps(y + 16 * i, m, acc[t][i]);
        }
    }
}

WASTE_AVX512 void gemm(const float *panel, int64_t cols, const float *X, int64_t xStride, int64_t T, float *Y,
                       int64_t yStride, int64_t valid)
{
    int64_t t = 0;
    for (; t + 6 <= T; t += 6)
        tile<6>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, valid);
    switch (T - t) {
    case 5: tile<5>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, valid); break;
    case 4: tile<4>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, valid); break;
    case 3: tile<3>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, valid); break;
    case 2: tile<2>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, valid); break;
    case 1: tile<1>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, valid); break;
    default: break;
    }
}

} // namespace

PanelGemm avx512PanelGemm() { return gemm; }

} // namespace waste::quant

#else
namespace waste::quant {
PanelGemm avx512PanelGemm() { return nullptr; }
} // namespace waste::quant
#endif
