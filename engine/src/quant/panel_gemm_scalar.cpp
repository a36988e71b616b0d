// The panel product's reference: each output one fused multiply-add per term, in order of
// k (quant/panel_gemm.hpp). The SIMD levels compute the same sequence per output.
#include "quant/panel_gemm.hpp"

#include <cmath>

namespace waste::quant {
namespace {

void gemm(const float *panel, int64_t cols, const float *X, int64_t xStride, int64_t T, float *Y, int64_t yStride,
          int64_t valid)
{
    float acc[kPanelRows];
    for (int64_t t = 0; t < T; ++t) {
        const float *x = X + t * xStride;
        for (int j = 0; j < kPanelRows; ++j)
            acc[j] = 0.0f;
        for (int64_t k = 0; k < cols; ++k) {
            const float xk = x[k];
            const float *w = panel + k * kPanelRows;
            for (int j = 0; j < kPanelRows; ++j)
                acc[j] = std::fma(xk, w[j], acc[j]);
        }
        float *y = Y + t * yStride;
        for (int64_t j = 0; j < valid; ++j)
            y[j] = acc[j];
    }
}

} // namespace

PanelGemm scalarPanelGemm() { return gemm; }

PanelGemm panelGemmFor(SimdLevel lvl)
{
    if (lvl == SimdLevel::Avx512 && avx512PanelGemm())
        return avx512PanelGemm();
    if (lvl == SimdLevel::Avx2 && avx2PanelGemm())
        return avx2PanelGemm();
    if (lvl == SimdLevel::Neon && neonPanelGemm())
        return neonPanelGemm();
    return gemm;
}

PanelGemm panelGemm() { return panelGemmFor(activeSimd()); }

} // namespace waste::quant
