// MXFP4 rows times activations quantised to int8 (issue 15: "e2m1 values doubled are exact
// int8"). The input vector is quantised once per matrix product, per group of 32 that lines
// up with the weights' scale groups: d_g = max|x| / 127, q_i = round(x_i / d_g). A group's
// dot product is then an exact integer, Σ (2 e2m1(w_i)) q_i, and the row is
//   per group g:  c_g = d_g * 2^(e_g - 127);  acc_{g mod 8} = acc_{g mod 8} + float(isum_g) * c_g
//   row:          r4_j = acc_j + acc_{j+4};  r2_j = r4_j + r4_{j+2};  result = (r2_0 + r2_1) * 0.5
// in that order at every level, so each level equals the scalar kernel bit for bit
// (tst_native_rows). The result differs from the f32 kernel by the rounding of x; the
// engine uses it only where tst_native_q8 shows the logits stay within 1e-3.
#pragma once

#include "quant/simd.hpp"

#include <cstdint>

namespace waste::quant {

inline constexpr int kQ8Group = 32;

// x (n inputs, a multiple of 32) as int8 codes q (n) and one f32 step d per 32 (n/32).
// Scalar at every level: the codes are what every kernel level then multiplies.
void quantizeQ8(const float *x, int64_t n, int8_t *q, float *d);

// Σ over the row as above. packed: n/2 bytes of e2m1 nibbles, low nibble first; scales:
// n/32 e8m0 bytes; q, d: quantizeQ8 of the input.
using Mxfp4Q8Row = float (*)(const uint8_t *packed, const uint8_t *scales, const int8_t *q, const float *d, int64_t n);

// The row's end, shared by every level: the fixed tree over the 8 group lanes, then the
// halving that undoes the doubled codes (exact).
inline float reduceQ8Lanes(const float acc[8])
{
    float r4[4], r2[2];
    for (int j = 0; j < 4; ++j)
        r4[j] = acc[j] + acc[j + 4];
    for (int j = 0; j < 2; ++j)
        r2[j] = r4[j] + r4[j + 2];
    return (r2[0] + r2[1]) * 0.5f;
}

Mxfp4Q8Row scalarMxfp4Q8();
Mxfp4Q8Row avx2Mxfp4Q8(); // nullptr where not compiled
Mxfp4Q8Row neonMxfp4Q8(); // nullptr where not compiled

Mxfp4Q8Row mxfp4Q8For(SimdLevel lvl); // a specific level (must be supported)
Mxfp4Q8Row mxfp4Q8();                 // the active level (quant::activeSimd())

} // namespace waste::quant
