// One token of the gated delta rule on a head's state, the recurrence of Kimi Delta Attention
// and Gated DeltaNet (model/delta_rule.hpp feeds it), at the best SIMD level:
//   S ← diag(decay) S;  u = Sᵀk;  δ = β (v − u);  S ← S + k δᵀ;  o = Sᵀq
// on S (Dk rows × Dv columns, row = key dim). Each column of S is its own recurrence, so the
// vector levels run several columns at once, each with the scalar code's operations in the
// scalar code's order (a multiply, then an add, rows in order; no fused multiply-add): every
// level gives the scalar result bit for bit (tst_simd), and logits do not depend on the level.
#pragma once

#include "quant/simd.hpp"

#include <cstdint>

namespace waste::quant {

// decay: Dk factors (already exp'd); u: Dv scratch (left holding δ); o: Dv outputs.
using DeltaRuleStep = void (*)(float *S, const float *q, const float *k, const float *v, const float *decay,
                               float beta, float *u, float *o, int64_t Dk, int64_t Dv);

DeltaRuleStep scalarDeltaRule();
DeltaRuleStep avx2DeltaRule();   // nullptr where not compiled
DeltaRuleStep avx512DeltaRule(); // nullptr where not compiled

DeltaRuleStep deltaRuleFor(SimdLevel lvl); // a specific level (must be supported)
DeltaRuleStep deltaRule();                 // the active level (quant::activeSimd())

} // namespace waste::quant
