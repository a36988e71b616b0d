// The delta rule 8 columns at a time (AVX2), the last columns under a mask: per column the
// scalar order of quant/delta_rule_scalar.cpp exactly (this file is compiled without
// contraction into fused multiply-adds), so S, u and o are the scalar results bit for bit.
// Up to four blocks of columns run both sweeps over the rows together before the next
// blocks: columns are independent, δ then stays in registers, and four sums in flight hide
// the latency of the adds a single column block waits on, row after row (1.7x a step at 128;
// eight would not fit AVX2's sixteen registers).
#include "quant/delta_rule.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX2 __attribute__((target("avx2")))

namespace waste::quant {
namespace {

WASTE_AVX2 inline __m256i tailMask(int64_t left)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(left < 8 ? left : 8)), lane);
}

// Columns [j, j + 8 NB) of S, the last block under `last`.
template <int NB>
WASTE_AVX2 inline void columns(float *S, const float *q, const float *k, const float *v, const float *decay, __m256 b,
                               float *u, float *o, int64_t Dk, int64_t Dv, int64_t j, __m256i last)
{
    const __m256i full = _mm256_set1_epi32(-1);
    __m256 acc[NB], d[NB], out[NB];
    #pragma GCC unroll 4
    for (int c = 0; c < NB; ++c) {
        acc[c] = _mm256_setzero_ps();
        out[c] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv + j;
        const __m256 di = _mm256_set1_ps(decay[i]), ki = _mm256_set1_ps(k[i]);
        #pragma GCC unroll 4
        for (int c = 0; c < NB; ++c) {
            const __m256i m = c + 1 < NB ? full : last;
            const __m256 r = _mm256_mul_ps(_mm256_maskload_ps(row + 8 * c, m), di);
            _mm256_maskstore_ps(row + 8 * c, m, r);
            acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(r, ki));
        }
    }
    #pragma GCC unroll 4
    for (int c = 0; c < NB; ++c) {
        const __m256i m = c + 1 < NB ? full : last;
        d[c] = _mm256_mul_ps(b, _mm256_sub_ps(_mm256_maskload_ps(v + j + 8 * c, m), acc[c]));
        _mm256_maskstore_ps(u + j + 8 * c, m, d[c]);
    }
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv + j;
        const __m256 ki = _mm256_set1_ps(k[i]), qi = _mm256_set1_ps(q[i]);
        #pragma GCC unroll 4
        for (int c = 0; c < NB; ++c) {
            const __m256i m = c + 1 < NB ? full : last;
            const __m256 r = _mm256_add_ps(_mm256_maskload_ps(row + 8 * c, m), _mm256_mul_ps(ki, d[c]));
            _mm256_maskstore_ps(row + 8 * c, m, r);
            out[c] = _mm256_add_ps(out[c], _mm256_mul_ps(r, qi));
        }
    }
    #pragma GCC unroll 4
    for (int c = 0; c < NB; ++c)
        _mm256_maskstore_ps(o + j + 8 * c, c + 1 < NB ? full : last, out[c]);
}

WASTE_AVX2 void deltaRuleStep(float *S, const float *q, const float *k, const float *v, const float *decay, float beta,
                              float *u, float *o, int64_t Dk, int64_t Dv)
{
    const __m256 b = _mm256_set1_ps(beta);
    const __m256i full = _mm256_set1_epi32(-1);
    int64_t j = 0;
    for (; Dv - j >= 32; j += 32)
        columns<4>(S, q, k, v, decay, b, u, o, Dk, Dv, j, full);
    const int64_t left = Dv - j;
    if (left == 0)
        return;
    const __m256i last = left % 8 == 0 ? full : tailMask(left % 8);
    switch ((left + 7) / 8) {
    case 1: columns<1>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 2: columns<2>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 3: columns<3>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    default: columns<4>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break; // a short fourth block
    }
}

} // namespace

DeltaRuleStep avx2DeltaRule() { return deltaRuleStep; }

} // namespace waste::quant

#else
namespace waste::quant {
DeltaRuleStep avx2DeltaRule() { return nullptr; }
} // namespace waste::quant
#endif
