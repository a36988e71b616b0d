// The body of the kernel-4 short convolution's vector levels (quant/short_conv4.hpp), written
// once over GCC's generic vectors of L floats: each level's file calls it from a function
// compiled for its instruction set, where it is inlined and the vectors become that set's
// registers (L = 8 for AVX2, 16 for AVX-512). A block's taps and ring are gathered into
// vectors once a run, each token is one load, four multiplies, four adds and one store, and
// the ring goes back once at the end; per channel the scalar order exactly (the including
// files are compiled without contraction into fused multiply-adds). The last C % L channels
// run the scalar code.
#pragma once

#include "quant/short_conv4.hpp"

#include <cstdint>
#include <cstring>

namespace waste::quant {

template <int L>
[[gnu::always_inline]] inline void shortConv4Lanes(float *x, int64_t xStride, int64_t tokens, const float *w,
                                                   float *ring, int64_t C)
{
    typedef float V __attribute__((vector_size(L * sizeof(float))));
    int64_t c0 = 0;
    for (; c0 + L <= C; c0 += L) {
        float taps[4][L], rg[3][L];
        for (int l = 0; l < L; ++l) {
            for (int j = 0; j < 4; ++j)
                taps[j][l] = w[(c0 + l) * 4 + j];
            for (int j = 0; j < 3; ++j)
                rg[j][l] = ring[(c0 + l) * 3 + j];
        }
        // Loaded through memcpy: no function here takes or returns a vector (the ABI of one
        // would depend on the caller's instruction set).
        V w0, w1, w2, w3, r0, r1, r2;
        const V zero = {};
        std::memcpy(&w0, taps[0], sizeof w0);
        std::memcpy(&w1, taps[1], sizeof w1);
        std::memcpy(&w2, taps[2], sizeof w2);
        std::memcpy(&w3, taps[3], sizeof w3);
        std::memcpy(&r0, rg[0], sizeof r0);
        std::memcpy(&r1, rg[1], sizeof r1);
        std::memcpy(&r2, rg[2], sizeof r2);
        for (int64_t t = 0; t < tokens; ++t) {
            float *row = x + t * xStride + c0;
            V in;
            std::memcpy(&in, row, sizeof in);
            V y = zero + r0 * w0;
            y = y + r1 * w1;
            y = y + r2 * w2;
            y = y + in * w3;
            std::memcpy(row, &y, sizeof y);
            r0 = r1;
            r1 = r2;
            r2 = in;
        }
        std::memcpy(rg[0], &r0, sizeof r0);
        std::memcpy(rg[1], &r1, sizeof r1);
        std::memcpy(rg[2], &r2, sizeof r2);
        for (int l = 0; l < L; ++l)
            for (int j = 0; j < 3; ++j)
                ring[(c0 + l) * 3 + j] = rg[j][l];
    }
    if (c0 < C)
        scalarShortConv4()(x + c0, xStride, tokens, w + c0 * 4, ring + c0 * 3, C - c0);
}

} // namespace waste::quant
