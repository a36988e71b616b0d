// The delta rule's reference order (quant/delta_rule.hpp), and the choice of level.
#include "quant/delta_rule.hpp"

namespace waste::quant {

namespace {

void deltaRuleStep(float *S, const float *q, const float *k, const float *v, const float *decay, float beta, float *u,
                   float *o, int64_t Dk, int64_t Dv)
{
    for (int64_t j = 0; j < Dv; ++j)
        u[j] = 0.0f;
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv;
        const float di = decay[i], ki = k[i];
        for (int64_t j = 0; j < Dv; ++j) {
            row[j] *= di;
            u[j] += row[j] * ki;
        }
    }
    for (int64_t j = 0; j < Dv; ++j)
        u[j] = beta * (v[j] - u[j]);
    for (int64_t j = 0; j < Dv; ++j)
        o[j] = 0.0f;
    for (int64_t i = 0; i < Dk; ++i) {
        float *row = S + i * Dv;
        const float ki = k[i], qi = q[i];
        for (int64_t j = 0; j < Dv; ++j) {
            row[j] += ki * u[j];
            o[j] += row[j] * qi;
        }
    }
}

} // namespace

DeltaRuleStep scalarDeltaRule() { return deltaRuleStep; }

DeltaRuleStep deltaRuleFor(SimdLevel lvl)
{
    if (lvl == SimdLevel::Avx512 && avx512DeltaRule())
        return avx512DeltaRule();
    if ((lvl == SimdLevel::Avx512 || lvl == SimdLevel::Avx2) && avx2DeltaRule())
        return avx2DeltaRule();
    return deltaRuleStep; // NEON: the scalar order (no vector level yet)
}

DeltaRuleStep deltaRule() { return deltaRuleFor(activeSimd()); }

} // namespace waste::quant
