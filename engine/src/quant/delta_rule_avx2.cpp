// The delta rule 8 columns at a time (AVX2), the last columns under a mask: per column the
// scalar order of quant/delta_rule_scalar.cpp exactly (this file is compiled without
// contraction into fused multiply-adds), so S, u and o are the scalar results bit for bit.
// A block of columns runs both sweeps over the rows before the next block: columns are
// independent, and δ then stays in a register.
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

WASTE_AVX2 void deltaRuleStep(float *S, const float *q, const float *k, const float *v, const float *decay, float beta,
                              float *u, float *o, int64_t Dk, int64_t Dv)
{
    const __m256 b = _mm256_set1_ps(beta);
    for (int64_t j = 0; j < Dv; j += 8) {
        const __m256i m = tailMask(Dv - j);
        __m256 acc = _mm256_setzero_ps();
        for (int64_t i = 0; i < Dk; ++i) {
            float *row = S + i * Dv + j;
            const __m256 r = _mm256_mul_ps(_mm256_maskload_ps(row, m), _mm256_set1_ps(decay[i]));
            _mm256_maskstore_ps(row, m, r);
            acc = _mm256_add_ps(acc, _mm256_mul_ps(r, _mm256_set1_ps(k[i])));
        }
        const __m256 d = _mm256_mul_ps(b, _mm256_sub_ps(_mm256_maskload_ps(v + j, m), acc));
        _mm256_maskstore_ps(u + j, m, d);
        __m256 out = _mm256_setzero_ps();
        for (int64_t i = 0; i < Dk; ++i) {
            float *row = S + i * Dv + j;
            const __m256 r = _mm256_add_ps(_mm256_maskload_ps(row, m), _mm256_mul_ps(_mm256_set1_ps(k[i]), d));
            _mm256_maskstore_ps(row, m, r);
            out = _mm256_add_ps(out, _mm256_mul_ps(r, _mm256_set1_ps(q[i])));
        }
        _mm256_maskstore_ps(o + j, m, out);
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
