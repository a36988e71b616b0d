// The causal depthwise short convolution in front of both linear attentions here (KDA's
// q/k/v convolutions, Gated DeltaNet's one over its q, k and v channels): channel c of
// the token's input x, with the K−1 inputs before it kept in a ring (oldest first),
// through the kernel w[c][0..K−1], then SiLU. A new sequence starts with a zero ring,
// which is the releases' left zero padding.
#pragma once

#include "model/ops.hpp"

#include <cstdint>

namespace waste::model {

// x: C channels, replaced by the output; w: C × K taps; ring: C × (K−1), updated.
inline void shortConv(float *x, const float *w, float *ring, int64_t C, int K)
{
    const int R = K - 1;
    for (int64_t c = 0; c < C; ++c) {
        const float *wc = w + c * K;
        float *rc = ring + c * R;
        float y = 0.0f;
        for (int j = 0; j < R; ++j)
            y += rc[j] * wc[j];
        y += x[c] * wc[R];
        for (int j = 0; j + 1 < R; ++j)
            rc[j] = rc[j + 1];
        if (R > 0)
            rc[R - 1] = x[c];
        x[c] = silu(y);
    }
}

} // namespace waste::model
