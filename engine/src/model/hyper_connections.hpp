// DeepSeek V4's manifold-constrained hyper-connections (mHC): the residual stream is hc
// streams of the hidden size per token. Before each sublayer the streams are mixed into its
// input by per-token weights, and after it the output is written back into every stream
// through a doubly stochastic combination (Sinkhorn) of the old streams
// (docs/architectures/deepseek-v4-flash.md; model.py Block.hc_pre / hc_post, ParallelHead.hc_head).
#pragma once

#include <cstdint>

namespace waste::model {

// One sublayer's split of the 2·hc + hc² mixes (already times rsqrt(mean(x²) + eps)) into
// pre[hc] (stream weights of the input), post[hc] (the output's weight into each stream) and
// comb[hc·hc] (comb[i·hc + j]: old stream i's weight in new stream j, Sinkhorn-normalised).
void hcSplit(const float *mix, const float *scale, const float *base, int hc, int iters, float eps, float *pre,
             float *post, float *comb);

// The sublayer's input: Σ_i pre_i X_i (X: hc rows of width floats).
void hcMerge(const float *X, const float *pre, int hc, int64_t width, float *out);

// The streams after the sublayer, in place: X_j ← post_j f + Σ_i comb[i·hc + j] X_i.
void hcPost(float *X, const float *f, const float *post, const float *comb, int hc, int64_t width);

// The model's output: pre_i = sigmoid(mix_i · scale + base_i) + eps (no Sinkhorn), merged.
void hcHeadWeights(const float *mix, float scale, const float *base, int hc, float eps, float *pre);

} // namespace waste::model
