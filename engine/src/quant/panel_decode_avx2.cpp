// The trunk's Q4G and Q8G rows with AVX2, 8 weights at a time: q * s, the same one rounded
// multiply per weight as the scalar decoder (quant/panel_decode.cpp has the reference).
#include "quant/panel_decode_levels.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2")))

namespace waste::quant {

namespace {

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

} // namespace waste::quant

#else
namespace waste::quant {
GroupedRowDecoder avx2Q4gRow() { return nullptr; }
GroupedRowDecoder avx2Q8gRow() { return nullptr; }
} // namespace waste::quant
#endif
