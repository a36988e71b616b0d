// The causal depthwise convolution of kernel 4 in front of KDA and Gated DeltaNet
// (model/short_conv.hpp feeds it; every release so far uses 4 taps), over a run of tokens
// of one sequence. Per channel c and token t, with the ring holding the three inputs before
// it (oldest first):
//   y = ((((0 + r0·w0) + r1·w1) + r2·w2) + x·w3),  then the ring moves on by x
// a multiply, then an add, in that order (no fused multiply-add). The vector levels run
// 8 or 16 channels at once with their rings in registers for the whole run, and give the
// scalar result bit for bit (tst_simd); a run of one token is a decode step.
#pragma once

#include "quant/simd.hpp"

#include <cstdint>

namespace waste::quant {

// x: `tokens` rows of C channels, row t at x + t * xStride, replaced by the sums (no SiLU);
// w: C × 4 taps; ring: C × 3, updated to the run's last three inputs.
using ShortConv4 = void (*)(float *x, int64_t xStride, int64_t tokens, const float *w, float *ring, int64_t C);

ShortConv4 scalarShortConv4();
ShortConv4 avx2ShortConv4();   // nullptr where not compiled
ShortConv4 avx512ShortConv4(); // nullptr where not compiled

ShortConv4 shortConv4For(SimdLevel lvl); // a specific level (must be supported)
ShortConv4 shortConv4();                 // the active level (quant::activeSimd())

} // namespace waste::quant
