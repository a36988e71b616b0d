// The delta rule 16 columns at a time (AVX-512F), the last columns under a mask: per column
// the scalar order of quant/delta_rule_scalar.cpp exactly (this file is compiled without
// contraction into fused multiply-adds), so S, u and o are the scalar results bit for bit.
// A block of columns runs both sweeps over the rows before the next block: columns are
// independent, and δ then stays in a register.
#include "quant/delta_rule.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX512 __attribute__((target("avx512f")))

namespace waste::quant {
namespace {

WASTE_AVX512 void deltaRuleStep(float *S, const float *q, const float *k, const float *v, const float *decay,
                                float beta, float *u, float *o, int64_t Dk, int64_t Dv)
{
    const __m512 b = _mm512_set1_ps(beta);
    for (int64_t j = 0; j < Dv; j += 16) {
        const int64_t left = Dv - j;
        const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
        __m512 acc = _mm512_setzero_ps();
        for (int64_t i = 0; i < Dk; ++i) {
            float *row = S + i * Dv + j;
            __m512 r = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row), _mm512_set1_ps(decay[i]));
            _mm512_mask_storeu_ps(row, m, r);
            acc = _mm512_add_ps(acc, _mm512_mul_ps(r, _mm512_set1_ps(k[i])));
        }
        const __m512 d = _mm512_mul_ps(b, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, v + j), acc));
        _mm512_mask_storeu_ps(u + j, m, d);
        __m512 out = _mm512_setzero_ps();
        for (int64_t i = 0; i < Dk; ++i) {
            float *row = S + i * Dv + j;
            const __m512 r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, row), _mm512_mul_ps(_mm512_set1_ps(k[i]), d));
            _mm512_mask_storeu_ps(row, m, r);
            out = _mm512_add_ps(out, _mm512_mul_ps(r, _mm512_set1_ps(q[i])));
        }
        _mm512_mask_storeu_ps(o + j, m, out);
    }
}

} // namespace

DeltaRuleStep avx512DeltaRule() { return deltaRuleStep; }

} // namespace waste::quant

#else
namespace waste::quant {
DeltaRuleStep avx512DeltaRule() { return nullptr; }
} // namespace waste::quant
#endif
