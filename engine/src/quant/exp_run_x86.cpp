// glibc's expf, four values at a time in double (AVX2 and FMA) or eight (AVX-512), the
// operations of its FMA build in its order (quant/exp_run.hpp). This file is compiled without contraction: the
// only fused multiply-adds are the ones written here, where glibc's build has them.
#include "quant/exp_run.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// GCC 12 reports its own AVX-512 conversion intrinsics (their undefined upper halves) as maybe
// uninitialised.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <cstring>

#define WASTE_AVX2 __attribute__((target("avx2,fma")))
#define WASTE_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))

namespace waste::quant {
namespace {

// glibc's __exp2f_data: tab[i] = bits(2^(i/32)) − (i << 47), the scaled 1/ln 2, the shift
// that rounds to an integer, and the cubic's coefficients scaled by 1/32 per power.
alignas(64) constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;
constexpr double kShift = 0x1.8p+52;
constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13, kC2 = 0x1.62e42ff0c52d6p-6;

// Four values; lanes with |x| ≥ 88 (or not finite) leave the fast path to std::exp, as
// glibc's own test (the top 12 bits of the float above 0x42a) sends them to its slow one.
WASTE_AVX2 inline void exp4(const float *x, float *y)
{
    const __m128 xf = _mm_loadu_ps(x);
    const __m256d xd = _mm256_cvtps_pd(xf);
    const __m256d kds = _mm256_fmadd_pd(_mm256_set1_pd(kInvLn2N), xd, _mm256_set1_pd(kShift));
    const __m256i ki = _mm256_castpd_si256(kds);
    const __m256d kd = _mm256_sub_pd(kds, _mm256_set1_pd(kShift));
    const __m256d r = _mm256_fmsub_pd(_mm256_set1_pd(kInvLn2N), xd, kd);
    const __m256i at = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
    const __m256i t = _mm256_add_epi64(_mm256_i64gather_epi64(reinterpret_cast<const long long *>(kTable), at, 8),
                                       _mm256_slli_epi64(ki, 47));
    const __m256d s = _mm256_castsi256_pd(t);
    const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(kC0), _mm256_set1_pd(kC1));
    const __m256d r2 = _mm256_mul_pd(r, r);
    __m256d p = _mm256_fmadd_pd(r, _mm256_set1_pd(kC2), _mm256_set1_pd(1.0));
    p = _mm256_fmadd_pd(z, r2, p);
    p = _mm256_mul_pd(p, s);
    _mm_storeu_ps(y, _mm256_cvtpd_ps(p));
    const __m128i top = _mm_and_si128(_mm_srli_epi32(_mm_castps_si128(xf), 20), _mm_set1_epi32(0x7ff));
    const int slow = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(top, _mm_set1_epi32(0x42a))));
    if (slow != 0) [[unlikely]] {
        alignas(16) float in[4];
        _mm_store_ps(in, xf);
        for (int i = 0; i < 4; ++i)
            if (slow & (1 << i))
                y[i] = std::exp(in[i]);
    }
}

WASTE_AVX2 void expRunAvx2(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        exp4(x + i, y + i);
    for (; i < n; ++i)
        y[i] = std::exp(x[i]);
}

// Eight values with AVX-512: the same operations, the table read by two-register permutes
// (entries 0–15 and 16–31, chosen by bit 4 of the index) instead of a gather.
WASTE_AVX512 inline void exp8(const float *x, float *y)
{
    const __m256 xf = _mm256_loadu_ps(x);
    const __m512d xd = _mm512_cvtps_pd(xf);
    const __m512d kds = _mm512_fmadd_pd(_mm512_set1_pd(kInvLn2N), xd, _mm512_set1_pd(kShift));
    const __m512i ki = _mm512_castpd_si512(kds);
    const __m512d kd = _mm512_sub_pd(kds, _mm512_set1_pd(kShift));
    const __m512d r = _mm512_fmsub_pd(_mm512_set1_pd(kInvLn2N), xd, kd);
    const __m512i t0 = _mm512_load_si512(kTable), t1 = _mm512_load_si512(kTable + 8);
    const __m512i t2 = _mm512_load_si512(kTable + 16), t3 = _mm512_load_si512(kTable + 24);
    const __m512i low = _mm512_permutex2var_epi64(t0, ki, t1), high = _mm512_permutex2var_epi64(t2, ki, t3);
    const __mmask8 upper = _mm512_test_epi64_mask(ki, _mm512_set1_epi64(16));
    const __m512i t = _mm512_add_epi64(_mm512_mask_blend_epi64(upper, low, high), _mm512_slli_epi64(ki, 47));
    const __m512d s = _mm512_castsi512_pd(t);
    const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
    const __m512d r2 = _mm512_mul_pd(r, r);
    __m512d p = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
    p = _mm512_fmadd_pd(z, r2, p);
    p = _mm512_mul_pd(p, s);
    _mm256_storeu_ps(y, _mm512_cvtpd_ps(p));
    const __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(xf), 20), _mm256_set1_epi32(0x7ff));
    const int slow = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x42a))));
    if (slow != 0) [[unlikely]] {
        alignas(32) float in[8];
        _mm256_store_ps(in, xf);
        for (int i = 0; i < 8; ++i)
            if (slow & (1 << i))
                y[i] = std::exp(in[i]);
    }
}

WASTE_AVX512 void expRunAvx512(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        exp8(x + i, y + i);
    for (; i < n; ++i)
        y[i] = std::exp(x[i]);
}

} // namespace

ExpRun avx2ExpRun() { return expRunAvx2; }
ExpRun avx512ExpRun() { return expRunAvx512; }

} // namespace waste::quant

#else
namespace waste::quant {
ExpRun avx2ExpRun() { return nullptr; }
ExpRun avx512ExpRun() { return nullptr; }
} // namespace waste::quant
#endif
