// AVX2 int8-activation MXFP4 row (mxfp4_q8.hpp): per group of 32 the doubled e2m1 codes
// come from one byte shuffle, their products with the int8 inputs from maddubs/madd (exact
// integers), and eight groups at a time are converted and scaled in the scalar kernel's
// lane order, so the result is the scalar one bit for bit.
#include "quant/mxfp4_q8.hpp"

#if defined(__x86_64__)
#include "format/native_values.hpp"

#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2")))

namespace waste::quant {
namespace {

// Σ (2 e2m1(w_i)) q_i of one group as 8 int32 partial sums (their total is the group's).
WASTE_AVX2 inline __m256i groupProducts(const uint8_t *packed, const int8_t *q)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, //
                                         0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(packed));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(b, mask), hi = _mm_and_si128(_mm_srli_epi16(b, 4), mask);
    const __m256i codes = _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
    const __m256i w = _mm256_shuffle_epi8(lut, codes);
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q));
    // maddubs multiplies unsigned by signed bytes: |w| times x carrying w's sign (pairs of
    // products reach at most 2 * 12 * 127, far from int16 saturation).
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

WASTE_AVX2 inline int32_t total(__m256i v)
{
    const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i t = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtsi128_si32(_mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1))));
}

WASTE_AVX2 float mxfp4Q8(const uint8_t *packed, const uint8_t *scales, const int8_t *q, const float *d, int64_t n)
{
    const int64_t groups = n / kQ8Group;
    __m256 acc = _mm256_setzero_ps();
    int64_t g = 0;
    for (; g + 8 <= groups; g += 8) {
        __m256i p[8];
        for (int k = 0; k < 8; ++k)
            p[k] = groupProducts(packed + 16 * (g + k), q + kQ8Group * (g + k));
        // Eight groups' totals into one vector, group k in lane k (integer adds: exact in
        // any order).
        const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
        const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
        const __m256i h0123 = _mm256_hadd_epi32(h01, h23), h4567 = _mm256_hadd_epi32(h45, h67);
        const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                                              _mm256_permute2x128_si256(h0123, h4567, 0x31));
        alignas(32) float c[8];
        for (int k = 0; k < 8; ++k)
            c[k] = d[g + k] * format::e8m0Scale(scales[g + k]);
        acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(sums), _mm256_load_ps(c)));
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    for (; g < groups; ++g) { // the last groups of a row whose group count is not a multiple of 8
        const float c = d[g] * format::e8m0Scale(scales[g]);
        lanes[g % 8] = lanes[g % 8] + float(total(groupProducts(packed + 16 * g, q + kQ8Group * g))) * c;
    }
    return reduceQ8Lanes(lanes);
}

} // namespace

Mxfp4Q8Row avx2Mxfp4Q8() { return mxfp4Q8; }

} // namespace waste::quant

#else
namespace waste::quant {
Mxfp4Q8Row avx2Mxfp4Q8() { return nullptr; }
} // namespace waste::quant
#endif
