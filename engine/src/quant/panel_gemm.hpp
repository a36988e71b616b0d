// Matrix products over many inputs at once (a prompt's pass): a matrix is decoded, 64 rows
// at a time, from its stored form (VQ codes, a release's own encoding, a trunk format) into
// a panel of f32 values, and every input is multiplied against the panel while it is hot.
// The decoders (quant/panel_decode.hpp) write the panel; the kernel here runs it.
//
// A panel holds rows [r0, r0 + 64) of W [rows x cols] k-major: panel[k * 64 + j] = W[r0 + j][k]
// (rows past the matrix are 0). The kernel computes, for inputs t < T and rows j < valid,
//   Y[t][j] = fma(X[t][cols-1], panel[cols-1][j], ... fma(X[t][1], panel[1][j], fma(X[t][0], panel[0][j], 0)))
// one fused multiply-add per term, in order of k. Every level (scalar, AVX2, AVX-512, NEON)
// does exactly that for each output, however it tiles inputs and rows, so a product is the
// same bit for bit at every level, for every T and every split over threads (tst_panel_gemm).
#pragma once

#include "quant/simd.hpp"

#include <cstdint>

namespace waste::quant {

inline constexpr int kPanelRows = 64;

// X: T inputs of `cols` floats (input t at X + t * xStride); Y: output t at Y + t * yStride,
// its first `valid` (<= 64) values written.
using PanelGemm = void (*)(const float *panel, int64_t cols, const float *X, int64_t xStride, int64_t T, float *Y,
                           int64_t yStride, int64_t valid);

PanelGemm scalarPanelGemm();
PanelGemm avx2PanelGemm();   // nullptr where not compiled
PanelGemm avx512PanelGemm(); // nullptr where not compiled
PanelGemm neonPanelGemm();   // nullptr where not compiled

PanelGemm panelGemmFor(SimdLevel lvl); // a specific level (must be supported)
PanelGemm panelGemm();                 // the active level (quant::activeSimd())

} // namespace waste::quant
