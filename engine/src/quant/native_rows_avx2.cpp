// AVX2 (+ F16C) row kernels for native expert records, compiled per function and chosen at
// run time. They compute the 16-lane order of native_rows.hpp exactly (a multiply, then an
// add; no fused multiply-add), so each row is the scalar kernel's result bit for bit.
#include "quant/native_rows.hpp"

#if defined(__x86_64__)
#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2,f16c")))

namespace waste::quant {
namespace {

// The 16 lanes of native_rows.hpp as two vectors: lo holds lanes 0-7, hi lanes 8-15.
struct Lanes {
    __m256 lo, hi;
};

WASTE_AVX2 inline Lanes zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }

// s = s + w * x for the 16 inputs at x (lanes 0-15 in order).
WASTE_AVX2 inline void addProducts(Lanes &s, __m256 w0, __m256 w1, const float *x)
{
    s.lo = _mm256_add_ps(s.lo, _mm256_mul_ps(w0, _mm256_loadu_ps(x)));
    s.hi = _mm256_add_ps(s.hi, _mm256_mul_ps(w1, _mm256_loadu_ps(x + 8)));
}

// acc = acc + scale * s.
WASTE_AVX2 inline void addScaled(Lanes &acc, const Lanes &s, float scale)
{
    const __m256 c = _mm256_set1_ps(scale);
    acc.lo = _mm256_add_ps(acc.lo, _mm256_mul_ps(c, s.lo));
    acc.hi = _mm256_add_ps(acc.hi, _mm256_mul_ps(c, s.hi));
}

// The last count (< 16) inputs of a group, lane j taking input j: in scalar, in the order
// the scalar kernel adds them.
template <typename Decode>
WASTE_AVX2 inline void addTail(Lanes &s, const float *x, int64_t count, Decode w)
{
    alignas(32) float l[16];
    _mm256_store_ps(l, s.lo);
    _mm256_store_ps(l + 8, s.hi);
    for (int64_t j = 0; j < count; ++j)
        l[j] = l[j] + w(j) * x[j];
    s = {_mm256_load_ps(l), _mm256_load_ps(l + 8)};
}

// The fixed tree: lanes j + j+8, then j + j+4, j + j+2, and lane 0 + lane 1.
WASTE_AVX2 inline float reduce(const Lanes &acc)
{
    const __m256 r8 = _mm256_add_ps(acc.lo, acc.hi);
    const __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    const __m128 r2 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    return _mm_cvtss_f32(_mm_add_ss(r2, _mm_shuffle_ps(r2, r2, 1)));
}

// 16 bytes of nibbles -> 32 codes in element order (low nibble first).
WASTE_AVX2 inline __m256i unpackNibbles(const uint8_t *p)
{
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(b, mask), hi = _mm_and_si128(_mm_srli_epi16(b, 4), mask);
    return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}

// The low 8 int8 of v as floats, times unit (exact: unit is 1 or 1/2).
WASTE_AVX2 inline __m256 widen(__m128i v, __m256 unit)
{
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)), unit);
}

// Group of 32 int8 weights (times unit) into the lanes: inputs 0-15, then 16-31.
WASTE_AVX2 inline void addGroup32(Lanes &s, __m256i w8, __m256 unit, const float *x)
{
    const __m128i a = _mm256_castsi256_si128(w8), b = _mm256_extracti128_si256(w8, 1);
    addProducts(s, widen(a, unit), widen(_mm_srli_si128(a, 8), unit), x);
    addProducts(s, widen(b, unit), widen(_mm_srli_si128(b, 8), unit), x + 16);
}

WASTE_AVX2 float mxfp4(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    // Every e2m1 value is an IEEE half whose low byte is 0: one byte shuffle gives each code's
    // high byte, unpacking it beside a zero byte makes the half, and the half -> float
    // conversion (F16C) is exact: 16 operations per 32 codes where widening doubled int8
    // values and halving them took 23. The same values in the same lanes.
    const __m256i highBytes = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(format::kE2m1HalfHighBytes))); // in both lanes
    const __m256i zeroBytes = _mm256_setzero_si256();
    Lanes acc = zero();
    for (int64_t b = 0; b * format::kMxfp4Group < n; ++b) {
        // Codes 0-15 in the low 128-bit lane, 16-31 in the high one; the unpacks work per lane,
        // so `first` holds the halves of codes 0-7 and 16-23, `second` those of 8-15 and 24-31.
        const __m256i h = _mm256_shuffle_epi8(highBytes, unpackNibbles(packed + 16 * b));
        const __m256i first = _mm256_unpacklo_epi8(zeroBytes, h), second = _mm256_unpackhi_epi8(zeroBytes, h);
        const float *xb = x + 32 * b;
        Lanes s = zero();
        addProducts(s, _mm256_cvtph_ps(_mm256_castsi256_si128(first)), _mm256_cvtph_ps(_mm256_castsi256_si128(second)), xb);
        addProducts(s, _mm256_cvtph_ps(_mm256_extracti128_si256(first, 1)),
                    _mm256_cvtph_ps(_mm256_extracti128_si256(second, 1)), xb + 16);
        addScaled(acc, s, format::e8m0Scale(scales[b]));
    }
    return reduce(acc);
}

// 8 e4m3 bytes -> 8 floats. The byte's exponent and mantissa placed in an IEEE half (bias
// 15 instead of 7) read the same bits 2^8 smaller, subnormals included; the half -> float
// conversion and the product with 2^8 are exact.
WASTE_AVX2 inline __m256 e4m3x8(const uint8_t *q)
{
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(q)));
    const __m128i sign = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8);
    const __m128i mag = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x7f)), 7);
    return _mm256_mul_ps(_mm256_cvtph_ps(_mm_or_si128(sign, mag)), _mm256_set1_ps(256.0f));
}

WASTE_AVX2 float fp8b128(const uint8_t *q, const uint8_t *blockScales, const float *x, int64_t n)
{
    Lanes acc = zero();
    for (int64_t b = 0, i0 = 0; i0 < n; ++b, i0 += format::kFp8Block) {
        const int64_t i1 = i0 + format::kFp8Block < n ? i0 + format::kFp8Block : n;
        Lanes s = zero();
        int64_t i = i0;
        for (; i + 16 <= i1; i += 16)
            addProducts(s, e4m3x8(q + i), e4m3x8(q + i + 8), x + i);
        if (i < i1) // only the last block of a row whose length is not a multiple of 16
            addTail(s, x + i, i1 - i, [&](int64_t j) { return format::e4m3Value(q[i + j]); });
        addScaled(acc, s, format::loadF32(blockScales + 4 * b));
    }
    return reduce(acc);
}

WASTE_AVX2 float int4g32(const uint8_t *packed, const uint8_t *scales, const float *x, int64_t n)
{
    const __m256i eight = _mm256_set1_epi8(8);
    const __m256 one = _mm256_set1_ps(1.0f);
    Lanes acc = zero();
    for (int64_t g = 0; g * format::kInt4Group < n; ++g) {
        Lanes s = zero();
        addGroup32(s, _mm256_sub_epi8(unpackNibbles(packed + 16 * g), eight), one, x + 32 * g);
        addScaled(acc, s, format::bf16Value(scales + 2 * g));
    }
    return reduce(acc);
}

// 8 bf16 -> 8 floats: the 16 bits are the top half of the f32.
WASTE_AVX2 inline __m256 bf16x8(const uint8_t *w)
{
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(w)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

WASTE_AVX2 float bf16(const uint8_t *w, const float *x, int64_t n)
{
    Lanes acc = zero();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        addProducts(acc, bf16x8(w + 2 * i), bf16x8(w + 2 * i + 16), x + i);
    if (i < n)
        addTail(acc, x + i, n - i, [&](int64_t j) { return format::bf16Value(w + 2 * (i + j)); });
    return reduce(acc);
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
