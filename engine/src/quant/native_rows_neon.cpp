// NEON row kernels for native expert records (aarch64 base ISA, no target attribute).
// Same plan as the x86 sets (native_rows_avx2.cpp): a vector sum per scale group, scaled
// group vectors accumulated, one reduction per row; agreement with the scalar reference is
// within rounding, element decoding exact (tst_native_rows).
#include "quant/native_rows.hpp"

#if defined(__aarch64__)
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"
#include "quant/e8m0_half.hpp"

#include <arm_neon.h>

namespace waste::quant {
namespace {

// 16 int8 weights times 16 inputs, added to two accumulators.
inline void dot16(int8x16_t w, const float *x, float32x4_t &s0, float32x4_t &s1)
{
    const int16x8_t lo = vmovl_s8(vget_low_s8(w)), hi = vmovl_high_s8(w);
    s0 = vfmaq_f32(s0, vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), vld1q_f32(x));
    s1 = vfmaq_f32(s1, vcvtq_f32_s32(vmovl_high_s16(lo)), vld1q_f32(x + 4));
    s0 = vfmaq_f32(s0, vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), vld1q_f32(x + 8));
    s1 = vfmaq_f32(s1, vcvtq_f32_s32(vmovl_high_s16(hi)), vld1q_f32(x + 12));
}

// 16 bytes of nibbles -> 32 codes in element order (low nibble first).
inline uint8x16x2_t unpackNibbles(const uint8_t *p)
{
    const uint8x16_t b = vld1q_u8(p);
    return vzipq_u8(vandq_u8(b, vdupq_n_u8(0x0f)), vshrq_n_u8(b, 4));
}

float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // e2m1 values doubled are exact int8 (see native_rows_avx2.cpp); halfE8m0 takes the 1/2.
    static const int8_t kDoubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    const int8x16_t lut = vld1q_s8(kDoubled);
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        const uint8x16x2_t c = unpackNibbles(packed + 16 * b);
        float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
        dot16(vqtbl1q_s8(lut, c.val[0]), x + 32 * b, s0, s1);
        dot16(vqtbl1q_s8(lut, c.val[1]), x + 32 * b + 16, s0, s1);
        acc = vfmaq_n_f32(acc, vaddq_f32(s0, s1), halfE8m0(scales[b]));
    }
    return vaddvq_f32(acc);
}

// 8 e4m3 bytes -> 8 floats divided by 2^8, through an IEEE half with the same exponent and
// mantissa bits (bias 15 instead of 7; subnormals included, the conversion is exact).
inline void e4m3x8Over256(const uint8_t *q, float32x4_t &lo, float32x4_t &hi)
{
    const uint16x8_t b = vmovl_u8(vld1_u8(q));
    const uint16x8_t h = vorrq_u16(vshlq_n_u16(vandq_u16(b, vdupq_n_u16(0x80)), 8),
                                   vshlq_n_u16(vandq_u16(b, vdupq_n_u16(0x7f)), 7));
    const float16x8_t f = vreinterpretq_f16_u16(h);
    lo = vcvt_f32_f16(vget_low_f16(f));
    hi = vcvt_high_f32_f16(f);
}

float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    float32x4_t acc = vdupq_n_f32(0);
    float tail = 0.0f;
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        const float scale = format::loadF32(blockScales + 4 * b);
        float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
        int64_t i = i0;
        for (; i + 8 <= i1; i += 8) {
            float32x4_t lo, hi;
            e4m3x8Over256(q + i, lo, hi);
            s0 = vfmaq_f32(s0, lo, vld1q_f32(x + i));
            s1 = vfmaq_f32(s1, hi, vld1q_f32(x + i + 4));
        }
        acc = vfmaq_n_f32(acc, vaddq_f32(s0, s1), 256.0f * scale);
        // Only the last block of a row whose length is not a multiple of 8 gets here.
        float rest = 0.0f;
        for (; i < i1; ++i)
            rest += format::e4m3Value(q[i]) * x[i];
        tail += scale * rest;
    }
    return vaddvq_f32(acc) + tail;
}

float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    const int8x16_t eight = vdupq_n_s8(8);
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        const uint8x16x2_t c = unpackNibbles(packed + 16 * g);
        float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
        dot16(vsubq_s8(vreinterpretq_s8_u8(c.val[0]), eight), x + 32 * g, s0, s1);
        dot16(vsubq_s8(vreinterpretq_s8_u8(c.val[1]), eight), x + 32 * g + 16, s0, s1);
        acc = vfmaq_n_f32(acc, vaddq_f32(s0, s1), format::bf16Value(scales + 2 * g));
    }
    return vaddvq_f32(acc);
}

float bf16(const uint8_t *w, const float *x, int64_t n)
{
    float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        // The 16 bits of a bf16 are the top half of its f32.
        const uint16x8_t h = vld1q_u16(reinterpret_cast<const uint16_t *>(w + 2 * i));
        s0 = vfmaq_f32(s0, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)), vld1q_f32(x + i));
        s1 = vfmaq_f32(s1, vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)), vld1q_f32(x + i + 4));
    }
    float s = vaddvq_f32(vaddq_f32(s0, s1));
    for (; i < n; ++i)
        s += format::bf16Value(w + 2 * i) * x[i];
    return s;
}

const NativeRowKernels kNeon{mxfp4, fp8b128, int4g32, bf16};

} // namespace

const NativeRowKernels *neonNativeRows() { return &kNeon; }

} // namespace waste::quant

#else
namespace waste::quant {
const NativeRowKernels *neonNativeRows() { return nullptr; }
} // namespace waste::quant
#endif
