// Decoders that fill a panel (quant/panel_gemm.hpp: 64 rows of a matrix, k-major, f32)
// from each stored form a prompt's pass multiplies:
//   - VQ codes (VQ3R, VQ2R, VQ4P): w = rho_r * ((c_0 + c_1) + c_2 [+ c_3]), the stages'
//     codebook entries summed in stage order, then the row's f16 scale;
//   - a release's own encoding (MXFP4, FP8B128, INT4G32, BF16): w = value * scale of its
//     group or block (BF16: the value);
//   - trunk tensors (F32/F16/BF16 resident as f32, Q8G, Q4G, Q3G, rows on disk): w = q * s.
// Each weight is one rounded operation per step, elementwise, so every level writes the
// same panel bit for bit. Rows past the matrix are written as 0.
#pragma once

#include "format/codebooks.hpp"
#include "format/trunk.hpp"
#include "quant/native_matvec.hpp"

#include <cstdint>

namespace waste::quant {

// A VQ matrix [rows, cols] of a record: `indices` its payload (blocks of 64 rows, then
// vector position, then row, then stage), `rowScalesF16` its rows' f16 scales, books
// base..base+stages-1; packed6: VQ4P (four 6-bit indices in 3 bytes).
struct VqMatrix {
    const uint8_t *indices = nullptr;
    const uint8_t *rowScalesF16 = nullptr;
    const format::Codebooks *books = nullptr;
    int64_t base = 0;
    int stages = 3;
    bool packed6 = false;
    int64_t rows = 0, cols = 0;
};
void decodeVqPanel(const VqMatrix &m, int64_t r0, float *panel);

// A matrix of a native record (quant/native_matvec.hpp: payload and scales as stored).
void decodeNativePanel(const NativeMatrix &m, int64_t r0, float *panel);

void decodeTrunkPanel(const format::TrunkTensor &w, int64_t r0, float *panel);
// Row r of a trunk tensor as f32: TrunkTensor::readRow's values, at the active SIMD level
// where the tensor is resident Q4G or Q8G.
void decodeTrunkRow(const format::TrunkTensor &w, int64_t r, float *out);

} // namespace waste::quant
