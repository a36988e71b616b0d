// The panel product with AVX2 and FMA: a quarter panel (16 rows, two registers of 8) against
// six inputs at a time (12 accumulators, the two rows' registers and a broadcast: 15 of the
// 16 registers), each output one fused multiply-add per term in order of k, as the scalar
// reference (quant/panel_gemm.hpp).
//
// Half a panel against three inputs (12 accumulators too, but four row registers) left no
// register for the broadcast, so the compiler read the rows from memory once per input:
// 15 loads for 12 multiply-adds, 63 GFLOP/s on one thread of an AMD EPYC (Zen 5) whose AVX2
// peak is 125. Two row loads and six broadcasts per 12 multiply-adds are the classic AVX2
// micro-kernel's shape (docs/benchmarks.md has the figures).
#include "quant/panel_gemm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2,fma")))

namespace waste::quant {
namespace {

constexpr int kQuarter = 16;

template <int TT>
WASTE_AVX2 inline void tile(const float *panel, int64_t cols, const float *X, int64_t xStride, float *Y,
                            int64_t yStride, int64_t q, int64_t valid)
{
    __m256 acc[TT][2];
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t) {
        acc[t][0] = _mm256_setzero_ps();
        acc[t][1] = _mm256_setzero_ps();
    }
    const float *w = panel + q;
    for (int64_t k = 0; k < cols; ++k, w += kPanelRows) {
        const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 8
        for (int t = 0; t < TT; ++t) {
            const __m256 x = _mm256_broadcast_ss(X + t * xStride + k);
            acc[t][0] = _mm256_fmadd_ps(x, w0, acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(x, w1, acc[t][1]);
        }
    }
    // Unrolled, so every accumulator is named by a constant: indexed by a variable, GCC kept
    // the array on the stack and stored all twelve on every step of k.
    const int64_t n = valid - q; // rows of this quarter to write, 1 to 16
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t) {
        float *y = Y + t * yStride + q;
        if (n >= kQuarter) {
            _mm256_storeu_ps(y, acc[t][0]);
            _mm256_storeu_ps(y + 8, acc[t][1]);
            continue;
        }
        float out[kQuarter];
        _mm256_storeu_ps(out, acc[t][0]);
        _mm256_storeu_ps(out + 8, acc[t][1]);
        for (int64_t j = 0; j < n; ++j)
            y[j] = out[j];
    }
}

WASTE_AVX2 void gemm(const float *panel, int64_t cols, const float *X, int64_t xStride, int64_t T, float *Y,
                     int64_t yStride, int64_t valid)
{
    for (int64_t q = 0; q < valid; q += kQuarter) {
        int64_t t = 0;
        for (; t + 6 <= T; t += 6)
            tile<6>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, q, valid);
        switch (T - t) {
        case 5: tile<5>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, q, valid); break;
        case 4: tile<4>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, q, valid); break;
        case 3: tile<3>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, q, valid); break;
        case 2: tile<2>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, q, valid); break;
        case 1: tile<1>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, q, valid); break;
        default: break;
        }
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
