// The panel decoders with AVX2 (quant/panel_decode.cpp has the reference): each weight is the
// scalar decoder's value, by the same rounded operations.
// - VQ3R, VQ2R and VQ4P: eight rows' 8-weight vectors at a time, each ((c_0 + c_1) + c_2 ...)
//   elementwise, then the 8 x 8 transpose, multiplying each column's eight rows by their
//   rho_r as it is stored.
// - The trunk's Q4G and Q8G rows, 8 weights at a time: q * s.
// - The native records' MXFP4, INT4G32, BF16 and FP8B128 rows, 8 weights at a time (FP8's
//   through F16C).
// - Sixteen decoded rows into the panel's k-major columns, as two 8 x 8 transposes.
// Without them an AVX2 machine decoded every panel element by element: a fifth of a
// 3,445-token pass of the mid-size container (docs/benchmarks.md).
#include "quant/panel_decode_levels.hpp"

#include "format/bytes.hpp"
#include "format/expert_record.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include "quant/panel_gemm.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2")))

namespace waste::quant {

namespace {

constexpr int P = kPanelRows;

// The 8 x 8 transpose: r[i] holds columns [0, 8) of row i; column d's eight rows are stored
// at o + d * P, times `scale` (row i's factor in lane i) where Scaled.
template <bool Scaled> WASTE_AVX2 inline void transpose8x8(const __m256 r[8], float *o, __m256 scale = __m256{})
{
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    // s_d: column d of rows 0-3 (low half) and column d + 4 (high half); s_{d+4} rows 4-7.
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    const __m256 c[8] = {_mm256_permute2f128_ps(s0, s4, 0x20), _mm256_permute2f128_ps(s1, s5, 0x20),
                         _mm256_permute2f128_ps(s2, s6, 0x20), _mm256_permute2f128_ps(s3, s7, 0x20),
                         _mm256_permute2f128_ps(s0, s4, 0x31), _mm256_permute2f128_ps(s1, s5, 0x31),
                         _mm256_permute2f128_ps(s2, s6, 0x31), _mm256_permute2f128_ps(s3, s7, 0x31)};
#pragma GCC unroll 8
    for (int d = 0; d < 8; ++d)
        _mm256_storeu_ps(o + d * P, Scaled ? _mm256_mul_ps(scale, c[d]) : c[d]);
}

// S stages of 8-bit indices (VQ2R, VQ3R), or four packed into 3 bytes of 6-bit ones (VQ4P),
// all 64 rows inside the matrix.
template <int S, bool Packed> WASTE_AVX2 void decodeStages(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
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
        for (int r8 = 0; r8 < P; r8 += 8) {
            __m256 row[8];
            for (int i = 0; i < 8; ++i) {
                const uint8_t *p = ix + (r8 + i) * perRow;
                unsigned idx[S];
                if constexpr (Packed) {
                    format::unpackVq4p(p, idx);
                } else {
                    for (int s = 0; s < S; ++s)
                        idx[s] = p[s];
                }
                __m256 w = _mm256_loadu_ps(b[0] + 8 * idx[0]);
                for (int s = 1; s < S; ++s)
                    w = _mm256_add_ps(w, _mm256_loadu_ps(b[s] + 8 * idx[s]));
                row[i] = w;
            }
            transpose8x8<true>(row, out + r8, _mm256_loadu_ps(scale + r8));
        }
    }
}

WASTE_AVX2 void decodeVq(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
{
    if (m.packed6)
        decodeStages<4, true>(m, r0, scale, panel);
    else if (m.stages == 2)
        decodeStages<2, false>(m, r0, scale, panel);
    else
        decodeStages<3, false>(m, r0, scale, panel);
}

// Sixteen decoded rows' columns [0, k8) into the panel's sixteen columns at dst, 8 x 8 at a time.
WASTE_AVX2 void transpose16Into(const float *rows16, int64_t cols, int64_t k8, float *dst)
{
    for (int64_t k0 = 0; k0 < k8; k0 += 8)
        for (int h = 0; h < 16; h += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = _mm256_loadu_ps(rows16 + (h + i) * cols + k0);
            transpose8x8<false>(r, dst + k0 * P + h);
        }
}

// Eight 4-bit codes from 4 bytes, low nibble first, as 32-bit lanes.
WASTE_AVX2 inline __m256i nibbles8(const uint8_t *q)
{
    const __m128i low = _mm_set1_epi8(0x0f);
    int32_t four = 0;
    __builtin_memcpy(&four, q, 4);
    const __m128i b = _mm_cvtsi32_si128(four);
    return _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(_mm_and_si128(b, low), _mm_and_si128(_mm_srli_epi16(b, 4), low)));
}

// A native row of n weights (n a multiple of 32). MXFP4: e2m1Value(code) * e8m0Scale(scale
// byte). Every E2M1 value (-0 included) is a half float whose low byte is 0: one byte shuffle
// gives each code's high byte, and F16C converts the halves exactly (as native_rows_avx2's
// matvec does); 16 codes a shuffle.
WASTE_AVX2 __attribute__((target("f16c"))) void mxfp4Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const __m128i highBytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(format::kE2m1HalfHighBytes));
    const __m128i low = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
    for (int64_t i = 0; i < n; i += 32) {
        const __m256 s = _mm256_set1_ps(format::e8m0Scale(sc[i / 32]));
        for (int64_t h = 0; h < 32; h += 16) {
            const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(q + (i + h) / 2));
            const __m128i codes = _mm_unpacklo_epi8(_mm_and_si128(b, low), _mm_and_si128(_mm_srli_epi16(b, 4), low));
            const __m128i high = _mm_shuffle_epi8(highBytes, codes); // 16 codes in order
            _mm256_storeu_ps(out + i + h, _mm256_mul_ps(_mm256_cvtph_ps(_mm_unpacklo_epi8(zero, high)), s));
            _mm256_storeu_ps(out + i + h + 8, _mm256_mul_ps(_mm256_cvtph_ps(_mm_unpackhi_epi8(zero, high)), s));
        }
    }
}

// INT4G32: float(code - 8) * bf16Value(scale).
WASTE_AVX2 void int4g32Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const __m256i eight = _mm256_set1_epi32(8);
    for (int64_t i = 0; i < n; i += 32) {
        const __m256 s = _mm256_set1_ps(format::bf16Value(sc + 2 * (i / 32)));
        for (int64_t h = 0; h < 32; h += 8)
            _mm256_storeu_ps(out + i + h,
                             _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(nibbles8(q + (i + h) / 2), eight)), s));
    }
}

// BF16: the value's bits in the top half of a float.
WASTE_AVX2 void bf16Row(const uint8_t *w, const uint8_t *, int64_t n, float *out)
{
    for (int64_t i = 0; i < n; i += 8) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(w + 2 * i));
        _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16)));
    }
}

// FP8B128: e4m3Value(code) * the block's f32 scale (format/native_values.hpp; the scale is
// stored little-endian, as loadF32 reads it). The code's seven low bits shifted into a half
// float's exponent and mantissa are the value times 2^-8, subnormals included (E4M3's bias is
// 7, a half's 15), so F16C converts them and 256 scales back exactly; the sign is set on the
// float and S.1111.111 is the table's NaN. A gather from the table ran slower (0.50 ns a
// weight against 0.42 for the scalar rows, on an AMD EPYC), and so did native_rows_avx2's
// e4m3x8 (which reads NaN as 480) with the NaN lanes set after it (0.32 against 0.28).
WASTE_AVX2 __attribute__((target("f16c"))) void fp8b128Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const __m128i low7 = _mm_set1_epi16(0x7f);
    const __m256 two8 = _mm256_set1_ps(256.0f);
    const __m256i signBit = _mm256_set1_epi32(int32_t(0x80000000u));
    const __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    for (int64_t i = 0; i < n; i += 8) {
        const __m128i code = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(q + i)));
        const __m128i magnitude = _mm_and_si128(code, low7);
        __m256 v = _mm256_mul_ps(_mm256_cvtph_ps(_mm_slli_epi16(magnitude, 7)), two8);
        v = _mm256_blendv_ps(v, nan, _mm256_castsi256_ps(_mm256_cvtepi16_epi32(_mm_cmpeq_epi16(magnitude, low7))));
        const __m256i sign = _mm256_and_si256(_mm256_slli_epi32(_mm256_cvtepu16_epi32(code), 24), signBit);
        v = _mm256_or_ps(v, _mm256_castsi256_ps(sign));
        const __m256 s = _mm256_set1_ps(format::loadF32(sc + 4 * (i / format::kFp8Block)));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(v, s));
    }
}

// As the AVX-512 decoder (panel_decode_avx512.cpp): `group` a multiple of 16.
template <bool Four> WASTE_AVX2 void groupedRow(const uint8_t *q, const float *sc, int64_t n, int64_t group, float *out)
{
    const __m128i low = _mm_set1_epi8(0x0f);
    const __m256i eight = _mm256_set1_epi32(8);
    for (int64_t g = 0, i0 = 0; i0 < n; ++g, i0 += group) {
        const int64_t i1 = std::min(n, i0 + group);
        const float s = sc[g];
        const __m256 vs = _mm256_set1_ps(s);
        int64_t i = i0;
        for (; i + 8 <= i1; i += 8) {
            __m256i v;
            if constexpr (Four) {
                int32_t four = 0;
                __builtin_memcpy(&four, q + (i >> 1), 4);
                const __m128i b = _mm_cvtsi32_si128(four);
                const __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(b, low), _mm_and_si128(_mm_srli_epi16(b, 4), low));
                v = _mm256_sub_epi32(_mm256_cvtepu8_epi32(nib), eight);
            } else {
                v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(q + i)));
            }
            _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(v), vs));
        }
        for (; i < i1; ++i) {
            const int value = Four ? ((i & 1) ? (q[i >> 1] >> 4) : (q[i >> 1] & 0x0f)) - 8 : int(int8_t(q[i]));
            out[i] = float(value) * s;
        }
    }
}

} // namespace

GroupedRowDecoder avx2Q4gRow() { return groupedRow<true>; }
GroupedRowDecoder avx2Q8gRow() { return groupedRow<false>; }
VqPanelDecoder avx2VqPanelDecoder() { return decodeVq; }
PanelTranspose16 avx2PanelTranspose16() { return transpose16Into; }
NativeRowDecoder avx2Mxfp4Row() { return mxfp4Row; }
NativeRowDecoder avx2Int4g32Row() { return int4g32Row; }
NativeRowDecoder avx2Bf16Row() { return bf16Row; }
NativeRowDecoder avx2Fp8b128Row() { return fp8b128Row; }

} // namespace waste::quant

#else
namespace waste::quant {
GroupedRowDecoder avx2Q4gRow() { return nullptr; }
GroupedRowDecoder avx2Q8gRow() { return nullptr; }
VqPanelDecoder avx2VqPanelDecoder() { return nullptr; }
PanelTranspose16 avx2PanelTranspose16() { return nullptr; }
NativeRowDecoder avx2Mxfp4Row() { return nullptr; }
NativeRowDecoder avx2Int4g32Row() { return nullptr; }
NativeRowDecoder avx2Bf16Row() { return nullptr; }
NativeRowDecoder avx2Fp8b128Row() { return nullptr; }
} // namespace waste::quant
#endif
