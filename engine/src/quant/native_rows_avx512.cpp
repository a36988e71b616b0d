// AVX-512 (F/BW/VL) row kernels for native expert records, compiled per function and chosen
// at run time. One vector is the 16 lanes of native_rows.hpp, computed in its order exactly
// (a multiply, then an add), so each row is the scalar kernel's result bit for bit.
#include "quant/native_rows.hpp"

#if defined(__x86_64__)
// GCC 12 flags its own AVX-512 reduction intrinsics (_mm512_undefined_*) as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <immintrin.h>

#include "quant/nibble_lanes_avx512.hpp"

#define WASTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))

namespace waste::quant {
namespace {

// One vector holds the 16 lanes of native_rows.hpp. s = s + w * x, rounded twice.
WASTE_AVX512 inline __m512 addProducts(__m512 s, __m512 w, __m512 x) { return _mm512_add_ps(s, _mm512_mul_ps(w, x)); }

// The fixed tree: lanes j + j+8, then j + j+4, j + j+2, and lane 0 + lane 1.
WASTE_AVX512 inline float reduce(__m512 acc)
{
    const __m256 r8 = _mm256_add_ps(_mm512_castps512_ps256(acc),
                                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1)));
    const __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    const __m128 r2 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    return _mm_cvtss_f32(_mm_add_ss(r2, _mm_shuffle_ps(r2, r2, 1)));
}

// 16 bytes of nibbles -> 32 codes in element order (low nibble first), as two vectors of 16
// lanes (quant/nibble_lanes_avx512.hpp), ready for a 16-entry table lookup.
WASTE_AVX512 inline void nibbleCodes(const uint8_t *p, __m512i &first, __m512i &second)
{
    const __m512i words = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    first = nibbleLanes(words, 0);
    second = nibbleLanes(words, 2);
}

WASTE_AVX512 float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // The 16 codes index a 16-float table of the e2m1 values (permutexvar reads the low 4 bits).
    const __m512 table = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, //
                                        -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        __m512i c0, c1;
        nibbleCodes(packed + 16 * b, c0, c1);
        const float *xb = x + 32 * b;
        __m512 s = _mm512_setzero_ps();
        s = addProducts(s, _mm512_permutexvar_ps(c0, table), _mm512_loadu_ps(xb));
        s = addProducts(s, _mm512_permutexvar_ps(c1, table), _mm512_loadu_ps(xb + 16));
        acc = addProducts(acc, _mm512_set1_ps(format::e8m0Scale(scales[b])), s);
    }
    return reduce(acc);
}

// 16 e4m3 bytes (widened to 16 bits) -> 16 floats, through an IEEE half with the same
// exponent and mantissa bits (native_rows_avx2.cpp); both steps exact.
WASTE_AVX512 inline __m512 e4m3x16(__m256i b)
{
    const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x80)), 8);
    const __m256i mag = _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x7f)), 7);
    return _mm512_mul_ps(_mm512_cvtph_ps(_mm256_or_si256(sign, mag)), _mm512_set1_ps(256.0f));
}

WASTE_AVX512 float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        __m512 s = _mm512_setzero_ps();
        int64_t i = i0;
        for (; i + 16 <= i1; i += 16)
            s = addProducts(s, e4m3x16(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(q + i)))),
                            _mm512_loadu_ps(x + i));
        if (i < i1) {
            // The short end of a row: masked loads read neither byte nor float past it, and
            // the lanes past it add 0 * 0 = +0, which leaves their sums as they are.
            const __mmask16 m = static_cast<__mmask16>((1u << (i1 - i)) - 1u);
            s = addProducts(s, e4m3x16(_mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, q + i))), _mm512_maskz_loadu_ps(m, x + i));
        }
        acc = addProducts(acc, _mm512_set1_ps(format::loadF32(blockScales + 4 * b)), s);
    }
    return reduce(acc);
}

WASTE_AVX512 float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // The codes as mxfp4() reads them, then a table of the 16 values (nibble - 8, exact as
    // floats) in place of widening, subtracting and converting.
    const __m512 values = _mm512_setr_ps(-8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f, //
                                         0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        __m512i c0, c1;
        nibbleCodes(packed + 16 * g, c0, c1);
        const float *xg = x + 32 * g;
        __m512 s = _mm512_setzero_ps();
        s = addProducts(s, _mm512_permutexvar_ps(c0, values), _mm512_loadu_ps(xg));
        s = addProducts(s, _mm512_permutexvar_ps(c1, values), _mm512_loadu_ps(xg + 16));
        acc = addProducts(acc, _mm512_set1_ps(format::bf16Value(scales + 2 * g)), s);
    }
    return reduce(acc);
}

// 16 bf16 -> 16 floats: the 16 bits are the top half of the f32.
WASTE_AVX512 inline __m512 bf16x16(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

WASTE_AVX512 float bf16(const uint8_t *w, const float *x, int64_t n)
{
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        acc = addProducts(acc, bf16x16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(w + 2 * i))),
                          _mm512_loadu_ps(x + i));
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
        acc = addProducts(acc, bf16x16(_mm256_maskz_loadu_epi16(m, w + 2 * i)), _mm512_maskz_loadu_ps(m, x + i));
    }
    return reduce(acc);
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
