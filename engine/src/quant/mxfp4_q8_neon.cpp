// NEON int8-activation MXFP4 row (mxfp4_q8.hpp), aarch64 base ISA: per group of 32 the
// doubled e2m1 codes from one table lookup, products widened to int16 and summed into
// int32 (exact), then each group scaled into lane g mod 8 in the scalar kernel's order.
#include "quant/mxfp4_q8.hpp"

#if defined(__aarch64__)
#include "format/native_values.hpp"

#include <arm_neon.h>

namespace waste::quant {
namespace {

float mxfp4Q8(const uint8_t *packed, const uint8_t *scales, const int8_t *q, const float *d, int64_t n)
{
    static const int8_t kDoubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    const int8x16_t lut = vld1q_s8(kDoubled);
    float acc[8] = {};
    for (int64_t g = 0; g * kQ8Group < n; ++g) {
        const uint8x16_t b = vld1q_u8(packed + 16 * g);
        const uint8x16x2_t c = vzipq_u8(vandq_u8(b, vdupq_n_u8(0x0f)), vshrq_n_u8(b, 4));
        const int8x16_t w0 = vqtbl1q_s8(lut, c.val[0]), w1 = vqtbl1q_s8(lut, c.val[1]);
        const int8x16_t x0 = vld1q_s8(q + kQ8Group * g), x1 = vld1q_s8(q + kQ8Group * g + 16);
        // |w x| <= 12 * 127 fits int16; pairwise adds into int32 stay exact.
        int32x4_t s = vpaddlq_s16(vmull_s8(vget_low_s8(w0), vget_low_s8(x0)));
        s = vpadalq_s16(s, vmull_high_s8(w0, x0));
        s = vpadalq_s16(s, vmull_s8(vget_low_s8(w1), vget_low_s8(x1)));
        s = vpadalq_s16(s, vmull_high_s8(w1, x1));
        const float cg = d[g] * format::e8m0Scale(scales[g]);
        acc[g % 8] = acc[g % 8] + float(vaddvq_s32(s)) * cg;
    }
    return reduceQ8Lanes(acc);
}

} // namespace

Mxfp4Q8Row neonMxfp4Q8() { return mxfp4Q8; }

} // namespace waste::quant

#else
namespace waste::quant {
Mxfp4Q8Row neonMxfp4Q8() { return nullptr; }
} // namespace waste::quant
#endif
