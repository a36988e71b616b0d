// The causal depthwise short convolution in front of both linear attentions here (KDA's
// q/k/v convolutions, Gated DeltaNet's one over its q, k and v channels): channel c of
// the token's input x, with the K−1 inputs before it kept in a ring (oldest first),
// through the kernel w[c][0..K−1], then SiLU. A new sequence starts with a zero ring,
// which is the releases' left zero padding.
#pragma once

#include "model/ops.hpp"
#include "quant/short_conv4.hpp"

#include <cstdint>

namespace waste::model {

namespace detail {
// One channel's sum and ring step, for any ring length r.
inline float shortConvChannel(float x, const float *wc, float *rc, int r)
{
    float y = 0.0f;
    for (int j = 0; j < r; ++j)
        y += rc[j] * wc[j];
    y += x * wc[r];
    for (int j = 0; j + 1 < r; ++j)
        rc[j] = rc[j + 1];
    if (r > 0)
        rc[r - 1] = x;
    return y;
}

} // namespace detail

// x: `tokens` rows of C channels, row t at x + t * xStride (tokens of one sequence in order),
// each replaced by its output; w: C × K taps; ring: C × (K−1), updated. A kernel of 4 runs the
// vector kernel (quant/short_conv4.hpp: the rings in registers for the whole run, each sum in
// shortConvChannel's order), any other the per-channel code.
inline void shortConvRows(float *x, int64_t xStride, int64_t tokens, const float *w, float *ring, int64_t C, int K)
{
    if (K == 4) { // every release so far
        quant::shortConv4()(x, xStride, tokens, w, ring, C);
    } else {
        const int R = K - 1;
        for (int64_t t = 0; t < tokens; ++t)
            for (int64_t c = 0; c < C; ++c)
                x[t * xStride + c] = detail::shortConvChannel(x[t * xStride + c], w + c * K, ring + c * R, R);
    }
    for (int64_t t = 0; t < tokens; ++t)
        siluRun(x + t * xStride, x + t * xStride, C); // after every channel's sum: the exps run several at a time
}

} // namespace waste::model
