// NEON (AArch64 Advanced SIMD) kernels. Advanced SIMD is part of the aarch64 base ISA, so
// this set is compiled for every aarch64 target and needs no target attribute.
// The sums of dotF32, rowQ8 and rowQ4 run in another order than the scalar set and agree
// within rounding (tst_simd). lutRow computes every entry exactly as the scalar set does
// (a multiply, then an add, d = 0..7, no fused multiply-add), so the VQ tables, and the int8
// tables VQ4P rounds from them, are the same bit for bit as scalar (tst_simd checks it).
#include "quant/simd.hpp"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace waste::quant {
namespace {

// 8 int8 weights -> two vectors of 4 floats.
inline void widen8(int8x8_t v, float32x4_t &lo, float32x4_t &hi)
{
    const int16x8_t w = vmovl_s8(v);
    lo = vcvtq_f32_s32(vmovl_s16(vget_low_s16(w)));
    hi = vcvtq_f32_s32(vmovl_high_s16(w));
}

float dotF32(const float *a, const float *b, int64_t n)
{
    float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    }
    for (; i + 4 <= n; i += 4)
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

float rowQ8(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g)
{
    float acc = 0.0f;
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
        int64_t i = i0;
        for (; i + 8 <= i1; i += 8) {
            float32x4_t lo, hi;
            widen8(vld1_s8(reinterpret_cast<const int8_t *>(q + i)), lo, hi);
            s0 = vfmaq_f32(s0, lo, vld1q_f32(x + i));
            s1 = vfmaq_f32(s1, hi, vld1q_f32(x + i + 4));
        }
        float inner = vaddvq_f32(vaddq_f32(s0, s1));
        for (; i < i1; ++i)
            inner += static_cast<float>(static_cast<int8_t>(q[i])) * x[i];
        acc += scale[k] * inner;
    }
    return acc;
}

float rowQ4(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g)
{
    float acc = 0.0f;
    const uint8x8_t mask = vdup_n_u8(0x0f);
    const int8x8_t eight = vdup_n_s8(8);
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
        int64_t i = i0;
        // Groups start on even inputs in padded rows, so byte boundaries line up.
        if ((i0 & 1) == 0) {
            for (; i + 16 <= i1; i += 16) {
                const uint8x8_t b = vld1_u8(q + (i >> 1));
                const uint8x8x2_t z = vzip_u8(vand_u8(b, mask), vshr_n_u8(b, 4));
                float32x4_t a0, a1, a2, a3;
                widen8(vsub_s8(vreinterpret_s8_u8(z.val[0]), eight), a0, a1);
                widen8(vsub_s8(vreinterpret_s8_u8(z.val[1]), eight), a2, a3);
                s0 = vfmaq_f32(s0, a0, vld1q_f32(x + i));
                s1 = vfmaq_f32(s1, a1, vld1q_f32(x + i + 4));
                s0 = vfmaq_f32(s0, a2, vld1q_f32(x + i + 8));
                s1 = vfmaq_f32(s1, a3, vld1q_f32(x + i + 12));
            }
        }
        float inner = vaddvq_f32(vaddq_f32(s0, s1));
        for (; i < i1; ++i) {
            const uint8_t b = q[i >> 1];
            inner += static_cast<float>(((i & 1) ? (b >> 4) : (b & 0x0f)) - 8) * x[i];
        }
        acc += scale[k] * inner;
    }
    return acc;
}

void lutRow(const float *x8, const float *bookT, int paddedEntries, float *out)
{
    for (int c = 0; c < paddedEntries; c += 16) {
        const float *blk = bookT + (c / 16) * 128;
        float32x4_t s[4];
        for (int j = 0; j < 4; ++j)
            s[j] = vdupq_n_f32(0.0f);
        // The scalar order: s = 0; s += x8[d] * Cb[c][d] for d = 0..7, each step rounded.
        for (int d = 0; d < 8; ++d) {
            const float32x4_t xd = vdupq_n_f32(x8[d]);
            for (int j = 0; j < 4; ++j)
                s[j] = vaddq_f32(s[j], vmulq_f32(xd, vld1q_f32(blk + d * 16 + 4 * j)));
        }
        for (int j = 0; j < 4; ++j)
            vst1q_f32(out + c + 4 * j, s[j]);
    }
}

const Kernels kNeon{dotF32, rowQ8, rowQ4, lutRow, nullptr}; // rowQ4Many: rowQ4 per input

} // namespace

const Kernels *neonKernels() { return &kNeon; }

} // namespace waste::quant

#else
namespace waste::quant {
const Kernels *neonKernels() { return nullptr; }
} // namespace waste::quant
#endif
