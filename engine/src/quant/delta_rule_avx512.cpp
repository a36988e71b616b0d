// The delta rule 16 columns at a time (AVX-512F), the last columns under a mask: per column
// the scalar order of quant/delta_rule_scalar.cpp exactly (this file is compiled without
// contraction into fused multiply-adds), so S, u and o are the scalar results bit for bit.
// Up to eight blocks of columns (a 128-wide head's whole row) run both sweeps over the rows
// together: columns are independent, δ then stays in registers, and eight sums in flight hide
// the latency of the adds a single column block waits on, row after row (1.9x a step at 128).
#include "quant/delta_rule.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#define WASTE_AVX512 __attribute__((target("avx512f")))

namespace waste::quant {
namespace {

// Columns [j, j + 16 NB) of S, the last block under `last`.
template <int NB>
WASTE_AVX512 inline void columns(float *S, const float *q, const float *k, const float *v, const float *decay, __m512 b,
                                 float *u, float *o, int64_t Dk, int64_t Dv, int64_t j, __mmask16 last)
{
    __mmask16 m[NB];
    __m512 acc[NB], d[NB], out[NB];
    #pragma GCC unroll 8
    for (int c = 0; c < NB; ++c) {
        m[c] = c + 1 < NB ? __mmask16(0xFFFF) : last;
        acc[c] = _mm512_setzero_ps();
        out[c] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv + j;
        const __m512 di = _mm512_set1_ps(decay[i]), ki = _mm512_set1_ps(k[i]);
        #pragma GCC unroll 8
        for (int c = 0; c < NB; ++c) {
            const __m512 r = _mm512_mul_ps(_mm512_maskz_loadu_ps(m[c], row + 16 * c), di);
            _mm512_mask_storeu_ps(row + 16 * c, m[c], r);
            acc[c] = _mm512_add_ps(acc[c], _mm512_mul_ps(r, ki));
        }
    }
    #pragma GCC unroll 8
    for (int c = 0; c < NB; ++c) {
        d[c] = _mm512_mul_ps(b, _mm512_sub_ps(_mm512_maskz_loadu_ps(m[c], v + j + 16 * c), acc[c]));
        _mm512_mask_storeu_ps(u + j + 16 * c, m[c], d[c]);
    }
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv + j;
        const __m512 ki = _mm512_set1_ps(k[i]), qi = _mm512_set1_ps(q[i]);
        #pragma GCC unroll 8
        for (int c = 0; c < NB; ++c) {
            const __m512 r = _mm512_add_ps(_mm512_maskz_loadu_ps(m[c], row + 16 * c), _mm512_mul_ps(ki, d[c]));
            _mm512_mask_storeu_ps(row + 16 * c, m[c], r);
            out[c] = _mm512_add_ps(out[c], _mm512_mul_ps(r, qi));
        }
    }
    #pragma GCC unroll 8
    for (int c = 0; c < NB; ++c)
        _mm512_mask_storeu_ps(o + j + 16 * c, m[c], out[c]);
}

WASTE_AVX512 void deltaRuleStep(float *S, const float *q, const float *k, const float *v, const float *decay,
                                float beta, float *u, float *o, int64_t Dk, int64_t Dv)
{
    const __m512 b = _mm512_set1_ps(beta);
    int64_t j = 0;
    for (; Dv - j >= 128; j += 128)
        columns<8>(S, q, k, v, decay, b, u, o, Dk, Dv, j, __mmask16(0xFFFF));
    const int64_t left = Dv - j;
    if (left == 0)
        return;
    const int64_t tail = left % 16;
    const __mmask16 last = tail == 0 ? __mmask16(0xFFFF) : __mmask16((1u << tail) - 1);
    switch ((left + 15) / 16) {
    case 1: columns<1>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 2: columns<2>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 3: columns<3>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 4: columns<4>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 5: columns<5>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 6: columns<6>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    case 7: columns<7>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
    default: columns<8>(S, q, k, v, decay, b, u, o, Dk, Dv, j, last); break;
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
