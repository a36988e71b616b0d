// AVX-512 (F/BW/VL) row kernels for native expert records, compiled per function and chosen
// at run time. Same plan as the AVX2 set (native_rows_avx2.cpp): a vector sum per scale
// group, scaled group vectors accumulated, one reduction per row; agreement with the scalar
// reference is within rounding (tst_native_rows).
#include "quant/native_rows.hpp"

#if defined(__x86_64__)
// GCC 12 flags its own AVX-512 reduction intrinsics (_mm512_undefined_*) as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"
#include "quant/e8m0_half.hpp"

#include <immintrin.h>

#define WASTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

namespace waste::quant {
namespace {

// 16 bytes of nibbles -> 32 codes in element order (low nibble first), as two halves.
WASTE_AVX512 inline void unpackNibbles(const uint8_t *p, __m128i &first, __m128i &second)
{
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(b, mask), hi = _mm_and_si128(_mm_srli_epi16(b, 4), mask);
    first = _mm_unpacklo_epi8(lo, hi);
    second = _mm_unpackhi_epi8(lo, hi);
}

WASTE_AVX512 float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // The 16 codes index a 16-float table directly (permutexvar reads the low 4 bits).
    // The table holds the values doubled, as the AVX2 set's does, so both take the block
    // scale from halfE8m0.
    const __m512 table = _mm512_setr_ps(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        __m128i c0, c1;
        unpackNibbles(packed + 16 * b, c0, c1);
        const float *xb = x + 32 * b;
        __m512 s = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(c0), table), _mm512_loadu_ps(xb));
        s = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(c1), table), _mm512_loadu_ps(xb + 16), s);
        acc = _mm512_fmadd_ps(s, _mm512_set1_ps(halfE8m0(scales[b])), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

// 16 e4m3 bytes -> 16 floats divided by 2^8 (the half-float reading of native_rows_avx2.cpp).
WASTE_AVX512 inline __m512 e4m3x16Over256(const uint8_t *q)
{
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(q)));
    const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x80)), 8);
    const __m256i mag = _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x7f)), 7);
    return _mm512_cvtph_ps(_mm256_or_si256(sign, mag));
}

WASTE_AVX512 float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
        int64_t i = i0;
        for (; i + 32 <= i1; i += 32) {
            s0 = _mm512_fmadd_ps(e4m3x16Over256(q + i), _mm512_loadu_ps(x + i), s0);
            s1 = _mm512_fmadd_ps(e4m3x16Over256(q + i + 16), _mm512_loadu_ps(x + i + 16), s1);
        }
        for (; i + 16 <= i1; i += 16)
            s0 = _mm512_fmadd_ps(e4m3x16Over256(q + i), _mm512_loadu_ps(x + i), s0);
        if (i < i1) {
            // The short end of a row: masked loads read neither byte nor float past it.
            const __mmask16 m = static_cast<__mmask16>((1u << (i1 - i)) - 1u);
            const __m256i b16 = _mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, q + i));
            const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(b16, _mm256_set1_epi16(0x80)), 8);
            const __m256i mag = _mm256_slli_epi16(_mm256_and_si256(b16, _mm256_set1_epi16(0x7f)), 7);
            s1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_or_si256(sign, mag)), _mm512_maskz_loadu_ps(m, x + i), s1);
        }
        const float scale = format::loadF32(blockScales + 4 * b);
        acc = _mm512_fmadd_ps(_mm512_add_ps(s0, s1), _mm512_set1_ps(256.0f * scale), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

WASTE_AVX512 float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    const __m512i eight = _mm512_set1_epi32(8);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        __m128i c0, c1;
        unpackNibbles(packed + 16 * g, c0, c1);
        const float *xg = x + 32 * g;
        const __m512 w0 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(c0), eight));
        const __m512 w1 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(c1), eight));
        const __m512 s = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xg + 16), _mm512_mul_ps(w0, _mm512_loadu_ps(xg)));
        acc = _mm512_fmadd_ps(s, _mm512_set1_ps(format::bf16Value(scales + 2 * g)), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

// 16 bf16 -> 16 floats: the 16 bits are the top half of the f32.
WASTE_AVX512 inline __m512 bf16x16(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

WASTE_AVX512 float bf16(const uint8_t *w, const float *x, int64_t n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(bf16x16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(w + 2 * i))),
                             _mm512_loadu_ps(x + i), s0);
        s1 = _mm512_fmadd_ps(bf16x16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(w + 2 * i + 32))),
                             _mm512_loadu_ps(x + i + 16), s1);
    }
    for (; i + 16 <= n; i += 16)
        s0 = _mm512_fmadd_ps(bf16x16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(w + 2 * i))),
                             _mm512_loadu_ps(x + i), s0);
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
        s1 = _mm512_fmadd_ps(bf16x16(_mm256_maskz_loadu_epi16(m, w + 2 * i)), _mm512_maskz_loadu_ps(m, x + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

const NativeRowKernels kAvx512{mxfp4, fp8b128, int4g32, bf16};

} // namespace

const NativeRowKernels *avx512NativeRows() { return &kAvx512; }

} // namespace waste::quant

#else
namespace waste::quant {
const NativeRowKernels *avx512NativeRows() { return nullptr; }
} // namespace waste::quant
#endif
