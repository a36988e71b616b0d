// Causal attention of many queries of one sequence at once (a prompt's pass), blocked
// flash-style: keys and values are visited 64 cached positions at a time, each block's
// scores for all the queries one panel product (quant/panel_gemm.hpp), the softmax kept
// online (a running maximum and sum per query), so memory grows with the queries and the
// block, never with their product. Masks: a query at position p sees positions
// [first, p] (first > 0 for a sliding window); a learned sink logit takes probability and
// gives no value (gpt-oss). Blocks start at multiples of 64, so a query's result depends
// only on its own position and window: not on the other queries of the pass.
#pragma once

#include <cstdint>
#include <functional>

namespace waste::model {

struct AttentionQueries {
    const float *q = nullptr; // query t at q + t * stride, dk floats (scaled by `scale` in the scores)
    int64_t stride = 0;
    int count = 0;
    const int *pos = nullptr;   // each query's position
    const int *first = nullptr; // each query's first visible position; null: 0
    const float *sinks = nullptr; // each query's own sink logit (a head's, when the queries are heads); null: the call's
};

// Where cached position s lies: a pointer to its dk key floats (or dv value floats).
using CachedRow = std::function<const float *(int64_t s)>;

// out + t * outStride gets query t's dv outputs: Σ_s softmax(z)_s · value(s), z_s = scale · q·key(s).
// sink: the head's sink logit, or null.
void flashAttention(const AttentionQueries &queries, int64_t dk, const CachedRow &key, const CachedRow &value,
                    int64_t dv, float scale, const float *sink, float *out, int64_t outStride);

} // namespace waste::model
