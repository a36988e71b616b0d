// The shared expert of a MoE layer, with Qwen3-Next's scalar sigmoid gate: the release
// multiplies the shared expert's output by sigmoid(shared_expert_gate · x), one number
// per token, before adding it to the routed experts' sum. Families without the gate
// (Kimi, DeepSeek-V3) get the plain expert.
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

namespace waste::model {

void Forward::sharedExpert(const MoeWeights &w, const float *x, float *out, int64_t width)
{
    denseFfn(w.shared, x, out, width);
    if (!w.sharedGate)
        return;
    float z = 0.0f;
    quant::matvec(*w.sharedGate, x, &z, m_pool);
    const float s = sigmoid(z);
    for (int64_t i = 0; i < m_c.hidden; ++i)
        out[i] *= s;
}

} // namespace waste::model
