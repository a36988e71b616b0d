// The vector levels' pieces of the panel decoders (quant/panel_decode.cpp chooses among them;
// panel_decode_avx2.cpp, panel_decode_avx512.cpp and panel_decode_neon.cpp define them, nullptr
// where not compiled;
// an AVX-512 machine also runs the AVX2 ones where its own level has none).
// Each writes the scalar decoder's values bit for bit.
#pragma once

#include "quant/panel_decode.hpp"

#include <cstdint>

namespace waste::quant {

// VQ3R rows [r0, r0 + 64) of a matrix into its panel, `scale` the rows' f32 scales.
using VqPanelDecoder = void (*)(const VqMatrix &m, int64_t r0, const float *scale, float *panel);
VqPanelDecoder avx512VqPanelDecoder();
VqPanelDecoder avx2VqPanelDecoder();
VqPanelDecoder neonVqPanelDecoder();

// Sixteen decoded rows (row-major, `cols` each), columns [0, k8), into the panel's sixteen
// columns at `dst`.
using PanelTranspose16 = void (*)(const float *rows16, int64_t cols, int64_t k8, float *dst);
PanelTranspose16 avx512PanelTranspose16();
PanelTranspose16 avx2PanelTranspose16();
PanelTranspose16 neonPanelTranspose16();
PanelTranspose16 panelTranspose16(); // the active level's, nullptr where it has none

// A Q4G or Q8G row as q * scale, for groups of a multiple of 16 weights.
using GroupedRowDecoder = void (*)(const uint8_t *q, const float *scales, int64_t n, int64_t group, float *out);
GroupedRowDecoder avx2Q4gRow();
GroupedRowDecoder avx2Q8gRow();
GroupedRowDecoder avx512Q4gRow();
GroupedRowDecoder avx512Q8gRow();
GroupedRowDecoder neonQ4gRow();
GroupedRowDecoder neonQ8gRow();

// A native record's row of MXFP4, INT4G32, BF16 or FP8B128 weights, its columns a multiple of 32.
using NativeRowDecoder = void (*)(const uint8_t *payload, const uint8_t *scales, int64_t n, float *out);
NativeRowDecoder avx512Mxfp4Row();
NativeRowDecoder avx512Int4g32Row();
NativeRowDecoder avx512Bf16Row();
NativeRowDecoder avx2Mxfp4Row();
NativeRowDecoder avx2Int4g32Row();
NativeRowDecoder avx2Bf16Row();
// FP8B128 (e4m3 codes), `scales` the row's 128-column blocks' f32 scales.
NativeRowDecoder avx512Fp8b128Row();
NativeRowDecoder avx2Fp8b128Row();
NativeRowDecoder neonFp8b128Row();
NativeRowDecoder neonMxfp4Row();
NativeRowDecoder neonInt4g32Row();
NativeRowDecoder neonBf16Row();

} // namespace waste::quant
