// One output row of a matrix kept in a release's own encoding (format/native_record.hpp),
// multiplied by f32 inputs without expanding the matrix. Each format has a scalar reference
// here; SIMD sets (AVX2, AVX-512, NEON) plug in per level and fall back to the scalar
// function where they have none. Chosen at run time with the same level as quant/simd.hpp.
//
// Every level computes the same IEEE operations in the same order, so a row's result is
// the same bit for bit at every level (ARCHITECTURE.md: new expert formats are bit-identity
// tested; tst_native_rows). The order, with 16 lanes (kNativeLanes), lane j taking inputs
// i = j (mod 16) of a scale group, which always starts at a multiple of 16:
//   per group g:  s_j = 0;  s_j = s_j + w_i * x_i  for the group's inputs of lane j, in order
//                 acc_j = acc_j + scale_g * s_j          (acc_j starts at 0)
//   row:          r8_j = acc_j + acc_{j+8};  r4_j = r8_j + r8_{j+4};  r2_j = r4_j + r4_{j+2};
//                 result = r2_0 + r2_1
// Every product and sum is rounded on its own (no fused multiply-add: the kernel files are
// compiled with -ffp-contract=off). BF16 has no groups: acc_j = acc_j + w_i * x_i.
#pragma once

#include "quant/simd.hpp"

#include <cstdint>

namespace waste::quant {

inline constexpr int kNativeLanes = 16;

struct NativeRowKernels {
    // n inputs (a multiple of 32). packed: n/2 bytes of e2m1 nibbles, low nibble first;
    // scales: n/32 e8m0 bytes. Σ_blocks 2^(e-127) * Σ_{i in block} e2m1(q_i) * x_i.
    float (*mxfp4)(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n);
    // n inputs. q: n e4m3 bytes; blockScales: ceil(n/128) little-endian f32 multipliers,
    // those of this row's 128-row block. Σ_blocks s_b * Σ_{i in block} e4m3(q_i) * x_i.
    float (*fp8b128)(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n);
    // n inputs (a multiple of 32). packed: n/2 bytes, value i = nibble i (low first) - 8;
    // scales: n/32 little-endian bf16. Σ_groups s_g * Σ_{i in group} v_i * x_i.
    float (*int4g32)(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n);
    // n inputs. w: n little-endian bf16. Σ w_i * x_i.
    float (*bf16)(const uint8_t *w, const float *x, int64_t n);
};

const NativeRowKernels &scalarNativeRows();
const NativeRowKernels *avx2NativeRows();   // nullptr where not compiled
const NativeRowKernels *avx512NativeRows(); // nullptr where not compiled
const NativeRowKernels *neonNativeRows();   // nullptr where not compiled

const NativeRowKernels &nativeRowsFor(SimdLevel lvl); // a specific level (must be supported)
const NativeRowKernels &nativeRows();                 // the active level (quant::activeSimd())

} // namespace waste::quant
