// The VQ panel decoder with AVX-512VL (VQ3R, VQ2R and VQ4P): sixteen rows' 8-weight vectors
// at a time, each rho_r * ((c_0 + c_1) + c_2 ...) as the scalar decoder computes it
// elementwise, the sums first and the products by rho_r sixteen rows at once as the 16 x 8
// transpose stores the panel's k-major columns (written out store by store: as a loop over
// an array of the columns it ran 15 % slower)
// (quant/panel_decode.cpp has the reference).
// Also the trunk's Q4G and Q8G rows and the native records' MXFP4, INT4G32, BF16 and FP8B128
// rows, 16 weights at a time: the same value, and the same one rounded multiply by its scale,
// per weight as the scalar decoder.
#include "quant/panel_decode_levels.hpp"

#include "format/bytes.hpp"
#include "format/expert_record.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include "quant/panel_gemm.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX512 __attribute__((target("avx512f,avx512vl")))

namespace waste::quant {


namespace {

constexpr int P = kPanelRows;

// The 16 x 8 transpose: r[i] holds columns [0, 8) of rows i (low half) and i + 8 (high
// half); column d's 16 rows are stored at o + d * P. The 8 x 8 transpose runs in both halves
// at once and a two-register permute finishes it. (GCC 12 warns inside its own unmasked
// 512-bit intrinsics, which fill no lane from undefined input.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
WASTE_AVX512 inline __m512 pairRows(__m256 low, __m256 high)
{
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(low)), _mm256_castps_pd(high), 1));
}

// The transpose, each column's sixteen values times `scale` (row i's factor in lane i) as
// they are stored.
template <bool Scaled>
WASTE_AVX512 inline void transpose16x8(const __m512 r[8], float *o, __m512 scale = __m512{})
{
    const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
    const __m512i hi = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
    const __m512 t0 = _mm512_unpacklo_ps(r[0], r[1]), t1 = _mm512_unpackhi_ps(r[0], r[1]);
    const __m512 t2 = _mm512_unpacklo_ps(r[2], r[3]), t3 = _mm512_unpackhi_ps(r[2], r[3]);
    const __m512 t4 = _mm512_unpacklo_ps(r[4], r[5]), t5 = _mm512_unpackhi_ps(r[4], r[5]);
    const __m512 t6 = _mm512_unpacklo_ps(r[6], r[7]), t7 = _mm512_unpackhi_ps(r[6], r[7]);
    const __m512 s0 = _mm512_shuffle_ps(t0, t2, 0x44), s1 = _mm512_shuffle_ps(t0, t2, 0xEE);
    const __m512 s2 = _mm512_shuffle_ps(t1, t3, 0x44), s3 = _mm512_shuffle_ps(t1, t3, 0xEE);
    const __m512 s4 = _mm512_shuffle_ps(t4, t6, 0x44), s5 = _mm512_shuffle_ps(t4, t6, 0xEE);
    const __m512 s6 = _mm512_shuffle_ps(t5, t7, 0x44), s7 = _mm512_shuffle_ps(t5, t7, 0xEE);
    _mm512_storeu_ps(o + 0 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s0, lo, s4)) : _mm512_permutex2var_ps(s0, lo, s4));
    _mm512_storeu_ps(o + 1 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s1, lo, s5)) : _mm512_permutex2var_ps(s1, lo, s5));
    _mm512_storeu_ps(o + 2 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s2, lo, s6)) : _mm512_permutex2var_ps(s2, lo, s6));
    _mm512_storeu_ps(o + 3 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s3, lo, s7)) : _mm512_permutex2var_ps(s3, lo, s7));
    _mm512_storeu_ps(o + 4 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s0, hi, s4)) : _mm512_permutex2var_ps(s0, hi, s4));
    _mm512_storeu_ps(o + 5 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s1, hi, s5)) : _mm512_permutex2var_ps(s1, hi, s5));
    _mm512_storeu_ps(o + 6 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s2, hi, s6)) : _mm512_permutex2var_ps(s2, hi, s6));
    _mm512_storeu_ps(o + 7 * P, Scaled ? _mm512_mul_ps(scale, _mm512_permutex2var_ps(s3, hi, s7)) : _mm512_permutex2var_ps(s3, hi, s7));
}
#pragma GCC diagnostic pop

// S stages of 8-bit indices (VQ2R, VQ3R), or four packed into 3 bytes of 6-bit ones (VQ4P),
// all 64 rows inside the matrix: sixteen rows' 8-weight vectors at a time, each
// rho_r * (((c_0 + c_1) + c_2) + c_3) as far as the stages go, then the 16 x 8 transpose.
template <int S, bool Packed> WASTE_AVX512 void decodeStages(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
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
        for (int r16 = 0; r16 < P; r16 += 16) {
            __m256 row[16];
            for (int i = 0; i < 16; ++i) {
                const uint8_t *p = ix + (r16 + i) * perRow;
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
            __m512 r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = pairRows(row[i], row[i + 8]);
            // rho_r times the sum, once per sixteen values (lane i: row i's rho).
            transpose16x8<true>(r, out + r16, _mm512_loadu_ps(scale + r16));
        }
    }
}

WASTE_AVX512 void decode(const VqMatrix &m, int64_t r0, const float *scale, float *panel)
{
    if (m.packed6)
        decodeStages<4, true>(m, r0, scale, panel);
    else if (m.stages == 2)
        decodeStages<2, false>(m, r0, scale, panel);
    else
        decodeStages<3, false>(m, r0, scale, panel);
}

// Sixteen decoded rows' columns [0, k8) into the panel's sixteen columns at dst, 16 x 8 at a time.
WASTE_AVX512 void transpose16Into(const float *rows16, int64_t cols, int64_t k8, float *dst)
{
    for (int64_t k0 = 0; k0 < k8; k0 += 8) {
        __m512 r[8];
        for (int i = 0; i < 8; ++i)
            r[i] = pairRows(_mm256_loadu_ps(rows16 + i * cols + k0), _mm256_loadu_ps(rows16 + (i + 8) * cols + k0));
        transpose16x8<false>(r, dst + k0 * P);
    }
}

// The masked conversions below run with all lanes on: GCC 12 warns inside the unmasked ones.
constexpr __mmask16 kAll = 0xffff;

// Sixteen 4-bit codes from 8 bytes, low nibble first, as 32-bit lanes.
WASTE_AVX512 inline __m512i nibbles16(const uint8_t *q)
{
    const __m128i low = _mm_set1_epi8(0x0f);
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(q));
    return _mm512_maskz_cvtepu8_epi32(kAll, _mm_unpacklo_epi8(_mm_and_si128(b, low), _mm_and_si128(_mm_srli_epi16(b, 4), low)));
}

// A grouped row (Q4G: two 4-bit values a byte, low nibble first, stored + 8; Q8G: int8),
// each group of `group` weights times its scale; `group` is a multiple of 16, so every
// group starts on a byte and only a row's last group can end inside a vector.
template <bool Four> WASTE_AVX512 void groupedRow(const uint8_t *q, const float *sc, int64_t n, int64_t group, float *out)
{
    const __m512i eight = _mm512_set1_epi32(8);
    for (int64_t g = 0, i0 = 0; i0 < n; ++g, i0 += group) {
        const int64_t i1 = std::min(n, i0 + group);
        const float s = sc[g];
        const __m512 vs = _mm512_set1_ps(s);
        int64_t i = i0;
        for (; i + 16 <= i1; i += 16) {
            __m512i v;
            if constexpr (Four) {
                v = _mm512_sub_epi32(nibbles16(q + (i >> 1)), eight);
            } else {
                v = _mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i *>(q + i)));
            }
            _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAll, v), vs));
        }
        for (; i < i1; ++i) {
            const int value = Four ? ((i & 1) ? (q[i >> 1] >> 4) : (q[i >> 1] & 0x0f)) - 8 : int(int8_t(q[i]));
            out[i] = float(value) * s;
        }
    }
}

// A native row of n weights (n a multiple of 32, the groups of MXFP4 and INT4G32).
// MXFP4: e2m1Value(code) * e8m0Scale(scale byte) (format/native_values.hpp); the table holds
// the sixteen E2M1 values, -0 included.
WASTE_AVX512 void mxfp4Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const __m512 values = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f,
                                         -2.0f, -3.0f, -4.0f, -6.0f);
    for (int64_t i = 0; i < n; i += 32) {
        const __m512 s = _mm512_set1_ps(format::e8m0Scale(sc[i / 32]));
        for (int64_t h = 0; h < 32; h += 16)
            _mm512_storeu_ps(out + i + h,
                             _mm512_mul_ps(_mm512_maskz_permutexvar_ps(kAll, nibbles16(q + (i + h) / 2), values), s));
    }
}

// INT4G32: float(code - 8) * bf16Value(scale).
WASTE_AVX512 void int4g32Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const __m512i eight = _mm512_set1_epi32(8);
    for (int64_t i = 0; i < n; i += 32) {
        const __m512 s = _mm512_set1_ps(format::bf16Value(sc + 2 * (i / 32)));
        for (int64_t h = 0; h < 32; h += 16)
            _mm512_storeu_ps(out + i + h, _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(
                                                            kAll, _mm512_sub_epi32(nibbles16(q + (i + h) / 2), eight)),
                                                        s));
    }
}

// BF16: the value's bits in the top half of a float.
WASTE_AVX512 void bf16Row(const uint8_t *w, const uint8_t *, int64_t n, float *out)
{
    for (int64_t i = 0; i < n; i += 16) {
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(w + 2 * i));
        _mm512_storeu_ps(out + i, _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, b), 16)));
    }
}

// FP8B128: e4m3Value(code) * the block's f32 scale, sixteen codes at a time, as the AVX2 row
// (panel_decode_avx2.cpp): the seven low bits as a half float are the value times 2^-8, 256
// scales back exactly, the sign goes on the float, S.1111.111 is the table's NaN.
WASTE_AVX512 void fp8b128Row(const uint8_t *q, const uint8_t *sc, int64_t n, float *out)
{
    const __m256i low7 = _mm256_set1_epi16(0x7f);
    const __m512 two8 = _mm512_set1_ps(256.0f), nan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));
    const __m512i signBit = _mm512_set1_epi32(int32_t(0x80000000u)), nanCode = _mm512_set1_epi32(0x7f);
    for (int64_t i = 0; i < n; i += 16) {
        const __m256i code = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(q + i)));
        const __m256i magnitude = _mm256_and_si256(code, low7);
        __m512 v = _mm512_mul_ps(_mm512_maskz_cvtph_ps(kAll, _mm256_slli_epi16(magnitude, 7)), two8);
        v = _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(_mm512_maskz_cvtepu16_epi32(kAll, magnitude), nanCode), nan);
        const __m512i sign = _mm512_maskz_and_epi32(
            kAll, _mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, code), 24), signBit);
        v = _mm512_castsi512_ps(_mm512_maskz_or_epi32(kAll, _mm512_castps_si512(v), sign));
        const __m512 s = _mm512_set1_ps(format::loadF32(sc + 4 * (i / format::kFp8Block)));
        _mm512_storeu_ps(out + i, _mm512_mul_ps(v, s));
    }
}

} // namespace

VqPanelDecoder avx512VqPanelDecoder() { return decode; }
NativeRowDecoder avx512Mxfp4Row() { return mxfp4Row; }
NativeRowDecoder avx512Int4g32Row() { return int4g32Row; }
NativeRowDecoder avx512Bf16Row() { return bf16Row; }
NativeRowDecoder avx512Fp8b128Row() { return fp8b128Row; }
GroupedRowDecoder avx512Q4gRow() { return groupedRow<true>; }
GroupedRowDecoder avx512Q8gRow() { return groupedRow<false>; }
PanelTranspose16 avx512PanelTranspose16() { return transpose16Into; }

} // namespace waste::quant

#else
namespace waste::quant {
VqPanelDecoder avx512VqPanelDecoder() { return nullptr; }
PanelTranspose16 avx512PanelTranspose16() { return nullptr; }
GroupedRowDecoder avx512Q4gRow() { return nullptr; }
GroupedRowDecoder avx512Q8gRow() { return nullptr; }
NativeRowDecoder avx512Mxfp4Row() { return nullptr; }
NativeRowDecoder avx512Int4g32Row() { return nullptr; }
NativeRowDecoder avx512Bf16Row() { return nullptr; }
NativeRowDecoder avx512Fp8b128Row() { return nullptr; }
} // namespace waste::quant
#endif
