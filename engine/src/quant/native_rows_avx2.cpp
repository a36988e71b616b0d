// AVX2 + FMA (+ F16C) row kernels for native expert records, compiled per function and
// chosen at run time. Each scale group is summed in a vector, scaled, and the scaled group
// vectors are accumulated; one horizontal sum ends the row. That is a different order from
// the scalar reference, so the results agree within rounding (tst_native_rows), not bit for bit.
#include "quant/native_rows.hpp"

#if defined(__x86_64__)
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"
#include "quant/e8m0_half.hpp"

#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace waste::quant {
namespace {

WASTE_AVX2 inline float hsum(__m256 v)
{
    __m128 lo = _mm256_castps256_ps128(v);
    lo = _mm_add_ps(lo, _mm256_extractf128_ps(v, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    return _mm_cvtss_f32(lo);
}

// 16 bytes of nibbles -> 32 codes in element order (low nibble first).
WASTE_AVX2 inline __m256i unpackNibbles(const uint8_t *p)
{
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(b, mask), hi = _mm_and_si128(_mm_srli_epi16(b, 4), mask);
    return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}

// Σ w_i x_i over 32 int8 weights in a vector (not yet reduced).
WASTE_AVX2 inline __m256 dot32(__m256i w8, const float *x)
{
    const __m128i lo = _mm256_castsi256_si128(w8), hi = _mm256_extracti128_si256(w8, 1);
    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), _mm256_loadu_ps(x));
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), _mm256_loadu_ps(x + 8), s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), _mm256_loadu_ps(x + 16), s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), _mm256_loadu_ps(x + 24), s);
    return s;
}

WASTE_AVX2 float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // e2m1 values doubled are the integers 0,1,2,3,4,6,8,12 (and negatives): exact in int8,
    // looked up with one byte shuffle. The 1/2 goes into the block's power-of-two scale,
    // which keeps every product exact (2^(e-128) is still a representable f32 for e >= 0).
    const __m256i lut = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, //
                                         0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        const __m256i w = _mm256_shuffle_epi8(lut, unpackNibbles(packed + 16 * b));
        const __m256 s = dot32(w, x + 32 * b);
        acc = _mm256_fmadd_ps(s, _mm256_set1_ps(halfE8m0(scales[b])), acc);
    }
    return hsum(acc);
}

// 8 e4m3 bytes -> 8 floats divided by 2^8: the byte's exponent and mantissa placed in an
// IEEE half (bias 15 instead of 7) read the same bits 2^8 smaller, subnormals included,
// and the half -> float conversion is exact. The caller puts the 2^8 back into the scale.
WASTE_AVX2 inline __m256 e4m3x8Over256(const uint8_t *q)
{
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(q)));
    const __m128i sign = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8);
    const __m128i mag = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x7f)), 7);
    return _mm256_cvtph_ps(_mm_or_si128(sign, mag));
}

WASTE_AVX2 float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    __m256 acc = _mm256_setzero_ps();
    float tail = 0.0f;
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        const float scale = format::loadF32(blockScales + 4 * b);
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        int64_t i = i0;
        for (; i + 16 <= i1; i += 16) {
            s0 = _mm256_fmadd_ps(e4m3x8Over256(q + i), _mm256_loadu_ps(x + i), s0);
            s1 = _mm256_fmadd_ps(e4m3x8Over256(q + i + 8), _mm256_loadu_ps(x + i + 8), s1);
        }
        for (; i + 8 <= i1; i += 8)
            s0 = _mm256_fmadd_ps(e4m3x8Over256(q + i), _mm256_loadu_ps(x + i), s0);
        acc = _mm256_fmadd_ps(_mm256_add_ps(s0, s1), _mm256_set1_ps(256.0f * scale), acc);
        // Only the last block of a row whose length is not a multiple of 8 gets here.
        float rest = 0.0f;
        for (; i < i1; ++i)
            rest += format::e4m3Value(q[i]) * x[i];
        tail += scale * rest;
    }
    return hsum(acc) + tail;
}

WASTE_AVX2 float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    const __m256i eight = _mm256_set1_epi8(8);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        const __m256i w = _mm256_sub_epi8(unpackNibbles(packed + 16 * g), eight);
        acc = _mm256_fmadd_ps(dot32(w, x + 32 * g), _mm256_set1_ps(format::bf16Value(scales + 2 * g)), acc);
    }
    return hsum(acc);
}

// 8 bf16 -> 8 floats: the 16 bits are the top half of the f32.
WASTE_AVX2 inline __m256 bf16x8(const uint8_t *w)
{
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(w)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

WASTE_AVX2 float bf16(const uint8_t *w, const float *x, int64_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(bf16x8(w + 2 * i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(bf16x8(w + 2 * i + 16), _mm256_loadu_ps(x + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(bf16x8(w + 2 * i), _mm256_loadu_ps(x + i), s0);
    float s = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; ++i)
        s += format::bf16Value(w + 2 * i) * x[i];
    return s;
}

const NativeRowKernels kAvx2{mxfp4, fp8b128, int4g32, bf16};

} // namespace

const NativeRowKernels *avx2NativeRows() { return &kAvx2; }

} // namespace waste::quant

#else
namespace waste::quant {
const NativeRowKernels *avx2NativeRows() { return nullptr; }
} // namespace waste::quant
#endif
