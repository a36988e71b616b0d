// The causal depthwise short convolution in front of both linear attentions here (KDA's
// q/k/v convolutions, Gated DeltaNet's one over its q, k and v channels): channel c of
// the token's input x, with the K−1 inputs before it kept in a ring (oldest first),
// through the kernel w[c][0..K−1], then SiLU. A new sequence starts with a zero ring,
// which is the releases' left zero padding.
#pragma once

#include "model/ops.hpp"

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

// The same for the releases' kernel of 4, written out: the ring read before it is written,
// the sum in the same order.
inline float shortConvChannel4(float x, const float *wc, float *rc)
{
    const float r0 = rc[0], r1 = rc[1], r2 = rc[2];
    float y = 0.0f;
    y += r0 * wc[0];
    y += r1 * wc[1];
    y += r2 * wc[2];
    y += x * wc[3];
    rc[0] = r1;
    rc[1] = r2;
    rc[2] = x;
    return y;
}
} // namespace detail

// x: C channels, replaced by the output; w: C × K taps; ring: C × (K−1), updated.
inline void shortConv(float *x, const float *w, float *ring, int64_t C, int K)
{
    const int R = K - 1;
    if (K == 4) // every release so far
        for (int64_t c = 0; c < C; ++c)
            x[c] = detail::shortConvChannel4(x[c], w + c * 4, ring + c * 3);
    else
        for (int64_t c = 0; c < C; ++c)
            x[c] = detail::shortConvChannel(x[c], w + c * K, ring + c * R, R);
    siluRun(x, x, C); // after every channel's sum: the exps run several at a time
}

} // namespace waste::model
