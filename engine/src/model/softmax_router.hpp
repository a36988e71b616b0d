// The softmax routers of the GQA families. Qwen3-MoE: the softmax over all experts, the
// top k of it, renormalised to sum 1 when norm_topk_prob. gpt-oss: the top k of the
// logits (router bias already added), then the softmax over those k. Ties go to the lower
// expert id, in both.
#pragma once

#include "format/manifest.hpp"

namespace waste::model {

// logits: the router's E outputs for one token (overwritten). Writes k ids and weights in
// selection order.
void routeSoftmax(const format::ModelConfig &c, float *logits, int *chosen, float *weight);

} // namespace waste::model
