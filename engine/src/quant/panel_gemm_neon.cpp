// The panel product with NEON (aarch64 base ISA): a quarter panel (16 rows, four registers
// of 4) against four inputs at a time (16 accumulators), each output one fused multiply-add
// per term (vfmaq_f32) in order of k, as the scalar reference (quant/panel_gemm.hpp).
#include "quant/panel_gemm.hpp"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace waste::quant {
namespace {

template <int TT>
inline void tile(const float *panel, int64_t cols, const float *X, int64_t xStride, float *Y, int64_t yStride,
                 int64_t quarter, int64_t valid)
{
    float32x4_t acc[TT][4];
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t)
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            acc[t][i] = vdupq_n_f32(0.0f);
    for (int64_t k = 0; k < cols; ++k) {
        const float *w = panel + k * kPanelRows + quarter;
        const float32x4_t w0 = vld1q_f32(w), w1 = vld1q_f32(w + 4), w2 = vld1q_f32(w + 8), w3 = vld1q_f32(w + 12);
#pragma GCC unroll 8
        for (int t = 0; t < TT; ++t) {
            const float32x4_t x = vdupq_n_f32(X[t * xStride + k]);
            acc[t][0] = vfmaq_f32(acc[t][0], x, w0);
            acc[t][1] = vfmaq_f32(acc[t][1], x, w1);
            acc[t][2] = vfmaq_f32(acc[t][2], x, w2);
            acc[t][3] = vfmaq_f32(acc[t][3], x, w3);
        }
    }
    // Unrolled, so every accumulator is named by a constant: indexed by a variable, GCC kept
    // the array on the stack and stored all sixteen on every step of k.
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t) {
        float out[16];
        for (int i = 0; i < 4; ++i)
            vst1q_f32(out + 4 * i, acc[t][i]);
        float *y = Y + t * yStride + quarter;
        for (int64_t j = 0; j < 16 && quarter + j < valid; ++j)
            y[j] = out[j];
    }
}

void gemm(const float *panel, int64_t cols, const float *X, int64_t xStride, int64_t T, float *Y, int64_t yStride,
          int64_t valid)
{
    for (int64_t quarter = 0; quarter < valid; quarter += 16) {
        int64_t t = 0;
        for (; t + 4 <= T; t += 4)
            tile<4>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, quarter, valid);
        switch (T - t) {
        case 3: tile<3>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, quarter, valid); break;
        case 2: tile<2>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, quarter, valid); break;
        case 1: tile<1>(panel, cols, X + t * xStride, xStride, Y + t * yStride, yStride, quarter, valid); break;
        default: break;
        }
    }
}

} // namespace

PanelGemm neonPanelGemm() { return gemm; }

} // namespace waste::quant

#else
namespace waste::quant {
PanelGemm neonPanelGemm() { return nullptr; }
} // namespace waste::quant
#endif
