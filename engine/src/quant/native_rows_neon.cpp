// NEON row kernels for native expert records (aarch64 base ISA, no target attribute). Four
// vectors are the 16 lanes of native_rows.hpp, computed in its order exactly (a multiply,
// then an add), so each row is the scalar kernel's result bit for bit.
#include "quant/native_rows.hpp"

#if defined(__aarch64__)
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <arm_neon.h>

namespace waste::quant {
namespace {

// The 16 lanes of native_rows.hpp as four vectors of 4 (v[k] holds lanes 4k..4k+3).
struct Lanes {
    float32x4_t v[4];
};

inline Lanes zero() { return {{vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)}}; }

// s = s + w * x for 4 lanes starting at 4k, rounded twice (no fused multiply-add).
inline void add4(Lanes &s, int k, float32x4_t w, const float *x) { s.v[k] = vaddq_f32(s.v[k], vmulq_f32(w, vld1q_f32(x))); }

// acc = acc + scale * s.
inline void addScaled(Lanes &acc, const Lanes &s, float scale)
{
    for (int k = 0; k < 4; ++k)
        acc.v[k] = vaddq_f32(acc.v[k], vmulq_f32(vdupq_n_f32(scale), s.v[k]));
}

// The last count (< 16) inputs of a group, lane j taking input j, in scalar.
template <typename Decode> inline void addTail(Lanes &s, const float *x, int64_t count, Decode w)
{
    float l[16];
    for (int k = 0; k < 4; ++k)
        vst1q_f32(l + 4 * k, s.v[k]);
    for (int64_t j = 0; j < count; ++j)
        l[j] = l[j] + w(j) * x[j];
    for (int k = 0; k < 4; ++k)
        s.v[k] = vld1q_f32(l + 4 * k);
}

// The fixed tree: lanes j + j+8, then j + j+4, j + j+2, and lane 0 + lane 1.
inline float reduce(const Lanes &acc)
{
    const float32x4_t r8lo = vaddq_f32(acc.v[0], acc.v[2]), r8hi = vaddq_f32(acc.v[1], acc.v[3]);
    const float32x4_t r4 = vaddq_f32(r8lo, r8hi);
    const float32x2_t r2 = vadd_f32(vget_low_f32(r4), vget_high_f32(r4));
    return vget_lane_f32(r2, 0) + vget_lane_f32(r2, 1);
}

// 16 int8 weights, times unit (1 or 1/2: exact), into the 16 lanes.
inline void addInt8x16(Lanes &s, int8x16_t w, float32x4_t unit, const float *x)
{
    const int16x8_t lo = vmovl_s8(vget_low_s8(w)), hi = vmovl_high_s8(w);
    add4(s, 0, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), unit), x);
    add4(s, 1, vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(lo)), unit), x + 4);
    add4(s, 2, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), unit), x + 8);
    add4(s, 3, vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(hi)), unit), x + 12);
}

// 16 bytes of nibbles -> 32 codes in element order (low nibble first).
inline uint8x16x2_t unpackNibbles(const uint8_t *p)
{
    const uint8x16_t b = vld1q_u8(p);
    return vzipq_u8(vandq_u8(b, vdupq_n_u8(0x0f)), vshrq_n_u8(b, 4));
}

float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // e2m1 values doubled are exact int8 (one table lookup), halved back exactly.
    static const int8_t kDoubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    const int8x16_t lut = vld1q_s8(kDoubled);
    const float32x4_t half = vdupq_n_f32(0.5f);
    Lanes acc = zero();
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        const uint8x16x2_t c = unpackNibbles(packed + 16 * b);
        Lanes s = zero();
        addInt8x16(s, vqtbl1q_s8(lut, c.val[0]), half, x + 32 * b);
        addInt8x16(s, vqtbl1q_s8(lut, c.val[1]), half, x + 32 * b + 16);
        addScaled(acc, s, format::e8m0Scale(scales[b]));
    }
    return reduce(acc);
}

// 8 e4m3 bytes -> 8 floats, through an IEEE half with the same exponent and mantissa bits
// (bias 15 instead of 7: the half reads 2^8 smaller, subnormals included), then times 2^8;
// both steps exact.
inline void e4m3x8(const uint8_t *q, float32x4_t &lo, float32x4_t &hi)
{
    const uint16x8_t b = vmovl_u8(vld1_u8(q));
    const uint16x8_t h = vorrq_u16(vshlq_n_u16(vandq_u16(b, vdupq_n_u16(0x80)), 8),
                                   vshlq_n_u16(vandq_u16(b, vdupq_n_u16(0x7f)), 7));
    const float16x8_t f = vreinterpretq_f16_u16(h);
    lo = vmulq_n_f32(vcvt_f32_f16(vget_low_f16(f)), 256.0f);
    hi = vmulq_n_f32(vcvt_high_f32_f16(f), 256.0f);
}

float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    Lanes acc = zero();
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        Lanes s = zero();
        int64_t i = i0;
        for (; i + 16 <= i1; i += 16) {
            float32x4_t w0, w1, w2, w3;
            e4m3x8(q + i, w0, w1);
            e4m3x8(q + i + 8, w2, w3);
            add4(s, 0, w0, x + i);
            add4(s, 1, w1, x + i + 4);
            add4(s, 2, w2, x + i + 8);
            add4(s, 3, w3, x + i + 12);
        }
        if (i < i1) // only the last block of a row whose length is not a multiple of 16
            addTail(s, x + i, i1 - i, [&](int64_t j) { return format::e4m3Value(q[i + j]); });
        addScaled(acc, s, format::loadF32(blockScales + 4 * b));
    }
    return reduce(acc);
}

float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    const int8x16_t eight = vdupq_n_s8(8);
    const float32x4_t one = vdupq_n_f32(1.0f);
    Lanes acc = zero();
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        const uint8x16x2_t c = unpackNibbles(packed + 16 * g);
        Lanes s = zero();
        addInt8x16(s, vsubq_s8(vreinterpretq_s8_u8(c.val[0]), eight), one, x + 32 * g);
        addInt8x16(s, vsubq_s8(vreinterpretq_s8_u8(c.val[1]), eight), one, x + 32 * g + 16);
        addScaled(acc, s, format::bf16Value(scales + 2 * g));
    }
    return reduce(acc);
}

float bf16(const uint8_t *w, const float *x, int64_t n)
{
    Lanes acc = zero();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        // The 16 bits of a bf16 are the top half of its f32.
        const uint16x8_t h0 = vld1q_u16(reinterpret_cast<const uint16_t *>(w + 2 * i));
        const uint16x8_t h1 = vld1q_u16(reinterpret_cast<const uint16_t *>(w + 2 * i + 16));
        add4(acc, 0, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h0), 16)), x + i);
        add4(acc, 1, vreinterpretq_f32_u32(vshll_high_n_u16(h0, 16)), x + i + 4);
        add4(acc, 2, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h1), 16)), x + i + 8);
        add4(acc, 3, vreinterpretq_f32_u32(vshll_high_n_u16(h1, 16)), x + i + 12);
    }
    if (i < n)
        addTail(acc, x + i, n - i, [&](int64_t j) { return format::bf16Value(w + 2 * (i + j)); });
    return reduce(acc);
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
