// The delta rule 16 columns at a time (AVX-512F), up to 8 blocks of them together: the body in
// quant/delta_rule_lanes.hpp, compiled here for this instruction set. Per column the scalar
// order of quant/delta_rule_scalar.cpp, so S, u and o are the scalar results bit for bit.
#include "quant/delta_rule.hpp"

#if defined(__x86_64__)
#include "quant/delta_rule_lanes.hpp"

namespace waste::quant {
namespace {

__attribute__((target("avx512f"))) void deltaRuleStep(float *S, const float *q, const float *k, const float *v,
                                                    const float *decay, float beta, float *u, float *o, int64_t Dk,
                                                    int64_t Dv)
{
    deltaRuleLanes<16, 8>(S, q, k, v, decay, beta, u, o, Dk, Dv);
}

} // namespace

DeltaRuleStep avx512DeltaRule() { return deltaRuleStep; }

} // namespace waste::quant

#else
namespace waste::quant {
DeltaRuleStep avx512DeltaRule() { return nullptr; }
} // namespace waste::quant
#endif
