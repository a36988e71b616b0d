// The shared expert of a MoE layer, with Qwen3-Next's scalar sigmoid gate: the release
// multiplies the shared expert's output by sigmoid(shared_expert_gate · x), one number
// per token, before adding it to the routed experts' sum. Families without the gate
// (Kimi, DeepSeek-V3) get the plain expert.
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

namespace waste::model {

void Forward::sharedExpert(const MoeWeights &w, int n, const float *x, float *out, int64_t width)
{
    denseFfn(w.shared, n, x, out, width);
    if (!w.sharedGate)
        return;
    // One gate logit per token (a one-row matrix), each token's value that of it alone.
    const int64_t Hd = m_c.hidden;
    Vec z(static_cast<size_t>(n));
    product(*w.sharedGate, n, x, Hd, z.data(), 1);
    for (int t = 0; t < n; ++t) {
        const float s = sigmoid(z[static_cast<size_t>(t)]);
        float *o = out + t * Hd;
        for (int64_t i = 0; i < Hd; ++i)
            o[i] *= s;
    }
}

} // namespace waste::model
