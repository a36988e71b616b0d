// The body of the delta rule's vector levels (quant/delta_rule.hpp), written once over GCC's
// generic vectors of L floats: each level's file calls it from a function compiled for its
// instruction set, where it is inlined and the vectors become that set's registers (L = 8 for
// AVX2, 16 for AVX-512). Up to G blocks of L columns run both sweeps over the rows together:
// columns are independent, δ then stays in registers, and G sums in flight hide the latency of
// the adds a single block would wait on, row after row. Per column the scalar order exactly
// (the including files are compiled without contraction into fused multiply-adds); the last
// Dv % L columns run the same operations one column at a time.
#pragma once

#include <cstdint>
#include <cstring>

namespace waste::quant {

namespace lanes {

// Columns [j, j + NB L) of S (rows Dv apart).
template <int L, int NB>
[[gnu::always_inline]] inline void columns(float *S, const float *q, const float *k, const float *v, const float *decay,
                                           float beta, float *u, float *o, int64_t Dk, int64_t Dv, int64_t j)
{
    // Loaded and stored through memcpy: no function here takes or returns a vector (the ABI
    // of one would depend on the caller's instruction set).
    typedef float V __attribute__((vector_size(L * sizeof(float))));
    V acc[NB], d[NB], out[NB];
#pragma GCC unroll 8
    for (int c = 0; c < NB; ++c) {
        acc[c] = V{};
        out[c] = V{};
    }
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv + j;
        const float di = decay[i], ki = k[i]; // a vector times a scalar: the scalar in every lane
#pragma GCC unroll 8
        for (int c = 0; c < NB; ++c) {
            V r;
            std::memcpy(&r, row + L * c, sizeof r);
            r = r * di;
            std::memcpy(row + L * c, &r, sizeof r);
            acc[c] = acc[c] + r * ki;
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < NB; ++c) {
        V vc;
        std::memcpy(&vc, v + j + L * c, sizeof vc);
        d[c] = beta * (vc - acc[c]);
        std::memcpy(u + j + L * c, &d[c], sizeof d[c]);
    }
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv + j;
        const float ki = k[i], qi = q[i];
#pragma GCC unroll 8
        for (int c = 0; c < NB; ++c) {
            V r;
            std::memcpy(&r, row + L * c, sizeof r);
            r = r + ki * d[c];
            std::memcpy(row + L * c, &r, sizeof r);
            out[c] = out[c] + r * qi;
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < NB; ++c)
        std::memcpy(o + j + L * c, &out[c], sizeof out[c]);
}

// One column j, the scalar order (the last Dv % L).
inline void column(float *S, const float *q, const float *k, const float *v, const float *decay, float beta, float *u,
                   float *o, int64_t Dk, int64_t Dv, int64_t j)
{
    float acc = 0.0f;
    for (int64_t i = 0; i < Dk; ++i) {
        float &s = S[i * Dv + j];
        s *= decay[i];
        acc += s * k[i];
    }
    const float d = beta * (v[j] - acc);
    u[j] = d;
    float out = 0.0f;
    for (int64_t i = 0; i < Dk; ++i) {
        float &s = S[i * Dv + j];
        s += k[i] * d;
        out += s * q[i];
    }
    o[j] = out;
}

} // namespace lanes

// The whole step: groups of G blocks, then single blocks, then single columns.
template <int L, int G>
[[gnu::always_inline]] inline void deltaRuleLanes(float *S, const float *q, const float *k, const float *v,
                                                  const float *decay, float beta, float *u, float *o, int64_t Dk,
                                                  int64_t Dv)
{
    int64_t j = 0;
    for (; Dv - j >= G * L; j += G * L)
        lanes::columns<L, G>(S, q, k, v, decay, beta, u, o, Dk, Dv, j);
    for (; Dv - j >= L; j += L)
        lanes::columns<L, 1>(S, q, k, v, decay, beta, u, o, Dk, Dv, j);
    for (; j < Dv; ++j)
        lanes::column(S, q, k, v, decay, beta, u, o, Dk, Dv, j);
}

} // namespace waste::quant
