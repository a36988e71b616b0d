// The panel decoders with NEON (aarch64 base ISA; quant/panel_decode.cpp has the reference):
// each weight is the scalar decoder's value, by the same rounded operations.
// - VQ3R, VQ2R and VQ4P: four rows' 8-weight vectors at a time, each ((c_0 + c_1) + c_2 ...)
//   elementwise, then two 4 x 4 transposes, multiplying each column's four rows by their
//   rho_r as it is stored.
// - The trunk's Q4G and Q8G rows and the native records' MXFP4, INT4G32, BF16 and FP8B128
//   rows, 8 weights at a time.
// - Sixteen decoded rows into the panel's k-major columns, 4 x 4 at a time.
#include "quant/panel_decode_levels.hpp"

#include "format/bytes.hpp"
#include "format/expert_record.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include "quant/panel_gemm.hpp"

#include <algorithm>

#if defined(__aarch64__)
#include <arm_neon.h>

namespace waste::quant {

namespace {

constexpr int P = kPanelRows;

// The 4 x 4 transpose: r[i] holds four columns of row i; column d's four rows are stored at
// o + d * P, times `scale` (row i's factor in lane i) where Scaled.
template <bool Scaled> inline void transpose4x4(const float32x4_t r[4], float *o, float32x4_t scale = vdupq_n_f32(0))
{
    const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
    const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    const auto pairs = [](float32x4_t a, float32x4_t b, bool second) {
        const float64x2_t x = vreinterpretq_f64_f32(a), y = vreinterpretq_f64_f32(b);
        return vreinterpretq_f32_f64(second ? vtrn2q_f64(x, y) : vtrn1q_f64(x, y));
    };
    const float32x4_t c[4] = {pairs(t0, t2, false), pairs(t1, t3, false), pairs(t0, t2, true), pairs(t1, t3, true)};
    for (int d = 0; d < 4; ++d)
        vst1q_f32(o + d * P, Scaled ? vmulq_f32(scale, c[d]) : c[d]);
}

// S stages of 8-bit indices (VQ2R, VQ3R), or four packed into 3 bytes of 6-bit ones (VQ4P),
// all 64 rows inside the matrix.
template <int S, bool Packed> void decodeStages(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
{
    constexpr int64_t perRow = Packed ? 3 : S;
    const int64_t nv = m.cols / 8;
    const uint8_t *blk = m.indices + (r0 / P) * nv * P * perRow;
    const float *b[S];
    for (int s = 0; s < S; ++s)
        b[s] = m.books->entry(m.base + s, 0);
    for (int64_t v = 0; v < nv; ++v) {
        const uint8_t *ix = blk + v * P * perRow;
        float *out = panel + 8 * v * P;
        for (int r4 = 0; r4 < P; r4 += 4) {
            float32x4_t lo[4], hi[4]; // each row's weights 0-3 and 4-7
            for (int i = 0; i < 4; ++i) {
                const uint8_t *p = ix + (r4 + i) * perRow;
                unsigned idx[S];
                if constexpr (Packed) {
                    format::unpackVq4p(p, idx);
                } else {
                    for (int s = 0; s < S; ++s)
                        idx[s] = p[s];
                }
                float32x4_t l = vld1q_f32(b[0] + 8 * idx[0]), h = vld1q_f32(b[0] + 8 * idx[0] + 4);
                for (int s = 1; s < S; ++s) {
                    l = vaddq_f32(l, vld1q_f32(b[s] + 8 * idx[s]));
                    h = vaddq_f32(h, vld1q_f32(b[s] + 8 * idx[s] + 4));
                }
                lo[i] = l;
                hi[i] = h;
            }
            const float32x4_t rho = vld1q_f32(scale + r4);
            transpose4x4<true>(lo, out + r4, rho);
            transpose4x4<true>(hi, out + 4 * P + r4, rho);
        }
    }
}

void decodeVq(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
{
    if (m.packed6)
        decodeStages<4, true>(m, r0, scale, panel);
    else if (m.stages == 2)
        decodeStages<2, false>(m, r0, scale, panel);
    else
        decodeStages<3, false>(m, r0, scale, panel);
}

// Sixteen decoded rows' columns [0, k8) into the panel's sixteen columns at dst.
void transpose16Into(const float *rows16, int64_t cols, int64_t k8, float *dst)
{
    for (int64_t k0 = 0; k0 < k8; k0 += 4)
        for (int h = 0; h < 16; h += 4) {
            float32x4_t r[4];
            for (int i = 0; i < 4; ++i)
                r[i] = vld1q_f32(rows16 + (h + i) * cols + k0);
            transpose4x4<false>(r, dst + k0 * P + h);
        }
}

// Eight 4-bit codes from 4 bytes, low nibble first, as bytes in element order.
inline uint8x8_t codes8(const uint8_t *q)
{
    uint32_t four = 0;
    __builtin_memcpy(&four, q, 4);
    const uint8x8_t b = vreinterpret_u8_u32(vdup_n_u32(four));
    return vzip1_u8(vand_u8(b, vdup_n_u8(0x0f)), vshr_n_u8(b, 4));
}

// Eight bytes as two vectors of 32-bit lanes.
inline uint32x4x2_t widen(uint8x8_t b)
{
    const uint16x8_t wide = vmovl_u8(b);
    return {{vmovl_u16(vget_low_u16(wide)), vmovl_high_u16(wide)}};
}

inline uint32x4x2_t nibbles8(const uint8_t *q) { return widen(codes8(q)); }

// MXFP4: e2m1Value(code) * e8m0Scale(scale byte). The magnitude (code mod 8) doubled is an
// exact integer (0, 1, 2, 3, 4, 6, 8, 12: one table lookup), halved back exactly; bit 3 is
// the sign, set on the float, so code 8 is -0 as in the table of format/native_values.hpp.
void mxfp4Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    static const uint8_t kDoubled[8] = {0, 1, 2, 3, 4, 6, 8, 12};
    const uint8x8_t table = vld1_u8(kDoubled);
    const float32x4_t half = vdupq_n_f32(0.5f);
    for (int64_t i = 0; i < n; i += 32) {
        const float32x4_t s = vdupq_n_f32(format::e8m0Scale(sc[i / 32]));
        for (int64_t h = 0; h < 32; h += 8) {
            const uint8x8_t code = codes8(q + (i + h) / 2);
            const uint32x4x2_t magnitude = widen(vtbl1_u8(table, vand_u8(code, vdup_n_u8(7))));
            const uint32x4x2_t sign = widen(vshr_n_u8(code, 3));
            for (int k = 0; k < 2; ++k) {
                const float32x4_t m = vmulq_f32(vcvtq_f32_u32(magnitude.val[k]), half);
                const float32x4_t value =
                    vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(m), vshlq_n_u32(sign.val[k], 31)));
                vst1q_f32(out + i + h + 4 * k, vmulq_f32(value, s));
            }
        }
    }
}

// INT4G32: float(code - 8) * bf16Value(scale).
void int4g32Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const int32x4_t eight = vdupq_n_s32(8);
    for (int64_t i = 0; i < n; i += 32) {
        const float32x4_t s = vdupq_n_f32(format::bf16Value(sc + 2 * (i / 32)));
        for (int64_t h = 0; h < 32; h += 8) {
            const uint32x4x2_t code = nibbles8(q + (i + h) / 2);
            for (int k = 0; k < 2; ++k)
                vst1q_f32(out + i + h + 4 * k,
                          vmulq_f32(vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(code.val[k]), eight)), s));
        }
    }
}

// BF16: the value's bits in the top half of a float.
void bf16Row(const uint8_t *w, const uint8_t *, int64_t n, float *out)
{
    for (int64_t i = 0; i < n; i += 8) {
        const uint16x8_t b = vld1q_u16(reinterpret_cast<const uint16_t *>(w + 2 * i));
        vst1q_f32(out + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(b), 16)));
        vst1q_f32(out + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(b, 16)));
    }
}

// FP8B128: e4m3Value(code) * the block's f32 scale. As the AVX2 row (panel_decode_avx2.cpp):
// the code's seven low bits shifted into a half float are the value times 2^-8, subnormals
// included; 256 scales back exactly, the sign is set on the float, S.1111.111 is the table's NaN.
void fp8b128Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const uint16x8_t low7 = vdupq_n_u16(0x7f);
    const float32x4_t two8 = vdupq_n_f32(256.0f);
    const float32x4_t nan = vreinterpretq_f32_u32(vdupq_n_u32(0x7fc00000u));
    for (int64_t i = 0; i < n; i += 8) {
        const uint16x8_t code = vmovl_u8(vld1_u8(q + i));
        const uint16x8_t magnitude = vandq_u16(code, low7);
        const uint16x8_t half = vshlq_n_u16(magnitude, 7);
        const uint16x8_t isNan = vceqq_u16(magnitude, low7);
        const float32x4_t s = vdupq_n_f32(format::loadF32(sc + 4 * (i / format::kFp8Block)));
        for (int k = 0; k < 2; ++k) {
            const auto part = [k](uint16x8_t x) { return k == 0 ? vget_low_u16(x) : vget_high_u16(x); };
            float32x4_t v = vmulq_f32(vcvt_f32_f16(vreinterpret_f16_u16(part(half))), two8);
            // The 16-bit all-ones lanes sign-extended to 32 bits.
            const uint32x4_t nanLanes = vreinterpretq_u32_s32(vmovl_s16(vreinterpret_s16_u16(part(isNan))));
            v = vbslq_f32(nanLanes, nan, v);
            const uint32x4_t sign = vshlq_n_u32(vshrq_n_u32(vmovl_u16(part(code)), 7), 31);
            v = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(v), sign));
            vst1q_f32(out + i + 4 * k, vmulq_f32(v, s));
        }
    }
}

// A grouped row (Q4G: two 4-bit values a byte, low nibble first, stored + 8; Q8G: int8),
// each group of `group` weights (a multiple of 16) times its scale.
template <bool Four> void groupedRow(const uint8_t *q, const float *sc, int64_t n, int64_t group, float *out)
{
    for (int64_t g = 0, i0 = 0; i0 < n; ++g, i0 += group) {
        const int64_t i1 = std::min(n, i0 + group);
        const float s = sc[g];
        const float32x4_t vs = vdupq_n_f32(s);
        int64_t i = i0;
        for (; i + 8 <= i1; i += 8) {
            int32x4_t v[2];
            if constexpr (Four) {
                const uint32x4x2_t code = nibbles8(q + (i >> 1));
                v[0] = vsubq_s32(vreinterpretq_s32_u32(code.val[0]), vdupq_n_s32(8));
                v[1] = vsubq_s32(vreinterpretq_s32_u32(code.val[1]), vdupq_n_s32(8));
            } else {
                const int16x8_t wide = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t *>(q + i)));
                v[0] = vmovl_s16(vget_low_s16(wide));
                v[1] = vmovl_high_s16(wide);
            }
            vst1q_f32(out + i, vmulq_f32(vcvtq_f32_s32(v[0]), vs));
            vst1q_f32(out + i + 4, vmulq_f32(vcvtq_f32_s32(v[1]), vs));
        }
        for (; i < i1; ++i) {
            const int value = Four ? ((i & 1) ? (q[i >> 1] >> 4) : (q[i >> 1] & 0x0f)) - 8 : int(int8_t(q[i]));
            out[i] = float(value) * s;
        }
    }
}

} // namespace

VqPanelDecoder neonVqPanelDecoder() { return decodeVq; }
PanelTranspose16 neonPanelTranspose16() { return transpose16Into; }
NativeRowDecoder neonMxfp4Row() { return mxfp4Row; }
NativeRowDecoder neonInt4g32Row() { return int4g32Row; }
NativeRowDecoder neonBf16Row() { return bf16Row; }
NativeRowDecoder neonFp8b128Row() { return fp8b128Row; }
GroupedRowDecoder neonQ4gRow() { return groupedRow<true>; }
GroupedRowDecoder neonQ8gRow() { return groupedRow<false>; }

} // namespace waste::quant

#else
namespace waste::quant {
VqPanelDecoder neonVqPanelDecoder() { return nullptr; }
PanelTranspose16 neonPanelTranspose16() { return nullptr; }
NativeRowDecoder neonMxfp4Row() { return nullptr; }
NativeRowDecoder neonInt4g32Row() { return nullptr; }
NativeRowDecoder neonBf16Row() { return nullptr; }
NativeRowDecoder neonFp8b128Row() { return nullptr; }
GroupedRowDecoder neonQ4gRow() { return nullptr; }
GroupedRowDecoder neonQ8gRow() { return nullptr; }
} // namespace waste::quant
#endif
