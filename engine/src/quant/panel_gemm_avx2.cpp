// The panel product with AVX2 and FMA: half a panel (32 rows, four registers of 8) against
// three inputs at a time (12 accumulators), each output one fused multiply-add per term in
// order of k, as the scalar reference (quant/panel_gemm.hpp).
#include "quant/panel_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2,fma")))

namespace waste::quant {
namespace {

template <int TT>
WASTE_AVX2 inline void tile(const float *panel, int64_t cols, const float *X, int64_t xStride, float *Y,
                            int64_t yStride, int64_t half, int64_t valid)
{
    __m256 acc[TT][4];
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t)
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            acc[t][i] = _mm256_setzero_ps();
    for (int64_t k = 0; k < cols; ++k) {
        const float *w = panel + k * kPanelRows + half;
        const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8), w2 = _mm256_loadu_ps(w + 16),
                     w3 = _mm256_loadu_ps(w + 24);
#pragma GCC unroll 8
        for (int t = 0; t < TT; ++t) {
            const __m256 x = _mm256_broadcast_ss(X + t * xStride + k);
            acc[t][0] = _mm256_fmadd_ps(x, w0, acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(x, w1, acc[t][1]);
            acc[t][2] = _mm256_fmadd_ps(x, w2, acc[t][2]);
            acc[t][3] = _mm256_fmadd_ps(x, w3, acc[t][3]);
        }
    }
    for (int t = 0; t < TT; ++t) {
        float out[32];
        for (int i = 0; i < 4; ++i)
            _mm256_storeu_ps(out + 8 * i, acc[t][i]);
        float *y = Y + t * yStride + half;
        for (int64_t j = 0; j < 32 && half + j < valid; ++j)
            y[j] = out[j];
    }
}

WASTE_AVX2 void gemm(const float *panel, int64_t cols, const float *X, int64_t xStride, int64_t T, float *Y,
                     int64_t yStride, int64_t valid)
{
    for (int64_t half = 0; half < valid; half += 32) {
        int64_t t = 0;
        for (; t + 3 <= T; t += 3)
            tile<3>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, half, valid);
        if (T - t == 2)
            tile<2>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, half, valid);
        else if (T - t == 1)
            tile<1>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, half, valid);
    }
}

} // namespace

PanelGemm avx2PanelGemm() { return gemm; }

} // namespace waste::quant

#else
namespace waste::quant {
PanelGemm avx2PanelGemm() { return nullptr; }
} // namespace waste::quant
#endif
