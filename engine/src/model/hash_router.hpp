// DeepSeek V4's router (model.py Gate): scores sqrt(softplus(logit)) over every expert; the
// first num_hash_layers layers take the experts their tid2eid table lists for the token id,
// the others the top k of score + bias (the bias chooses, never weighs); the chosen experts'
// scores, divided by their sum, times routed_scaling_factor, are their weights.
#pragma once

#include <cstdint>

namespace waste::model {

// logits: E router logits (overwritten with the scores); bias: E or null; hashRow: the
// token's K expert ids (as floats) on a hash layer, else null. chosen / weight: K each, in
// selection order (ties to the lowest id).
void routeSqrtSoftplus(float *logits, int64_t E, int64_t K, const float *bias, const float *hashRow, float scale,
                       int *chosen, float *weight);

} // namespace waste::model
