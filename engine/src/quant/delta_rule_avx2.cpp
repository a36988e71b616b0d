// The delta rule 8 columns at a time (AVX2), up to 4 blocks of them together: the body in
// quant/delta_rule_lanes.hpp, compiled here for this instruction set. Per column the scalar
// order of quant/delta_rule_scalar.cpp, so S, u and o are the scalar results bit for bit.
#include "quant/delta_rule.hpp"

#if defined(__x86_64__)
#include "quant/delta_rule_lanes.hpp"

namespace waste::quant {
namespace {

__attribute__((target("avx2"))) void deltaRuleStep(float *S, const float *q, const float *k, const float *v,
                                                    const float *decay, float beta, float *u, float *o, int64_t Dk,
                                                    int64_t Dv)
{
    deltaRuleLanes<8, 4>(S, q, k, v, decay, beta, u, o, Dk, Dv);
}

} // namespace

DeltaRuleStep avx2DeltaRule() { return deltaRuleStep; }

} // namespace waste::quant

#else
namespace waste::quant {
DeltaRuleStep avx2DeltaRule() { return nullptr; }
} // namespace waste::quant
#endif
