// Gated feed-forward blocks: the dense FFN of the first layers and the shared experts.
#include "model/forward.hpp"
#include "model/clamped_swiglu.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"

#include <cmath>

namespace waste::model {

// silu(g)·u, or K3's SiTU-GLU when the config says hidden_act = "situ".
void Forward::activate(const float *g, const float *u, float *out, int64_t n) const
{
    if (m_c.v4.on) { // DeepSeek V4, routed and shared experts: silu(min(g, limit)) · clamp(u, ±limit)
        const float lim = m_c.v4.swigluLimit;
        for (int64_t i = 0; i < n; ++i)
            out[i] = lim > 0.0f ? silu(std::min(g[i], lim)) * std::clamp(u[i], -lim, lim) : silu(g[i]) * u[i];
        return;
    }
    if (m_c.g.swigluLimit > 0.0f) { // gpt-oss (its only FFNs are the routed experts)
        clampedSwiglu(g, u, out, n, m_c.g.swigluAlpha, m_c.g.swigluLimit);
        return;
    }
    if (!m_c.situ) {
        swigluRun(g, u, out, n);
        return;
    }
    const float b = m_c.situBeta, l = m_c.situLinearBeta;
    for (int64_t i = 0; i < n; ++i) {
        const float gs = b * std::tanh(g[i] / b) * sigmoid(g[i]);
        const float us = l > 0.0f ? l * std::tanh(u[i] / l) : u[i];
        out[i] = gs * us;
    }
}

void Forward::denseFfn(const FfnWeights &w, const float *x, float *out, int64_t width)
{
    denseFfn(w, 1, x, out, width);
}

// n tokens (rows of the hidden size): each matrix is one pass for all of them (gate and up
// in one split), each token's values those of denseFfn alone.
void Forward::denseFfn(const FfnWeights &w, int n, const float *x, float *out, int64_t width)
{
    const int64_t Hd = m_c.hidden;
    Vec local; // gate and up, both written whole by their products
    float *g = passScratch(PassScratch::Ffn, 2 * static_cast<size_t>(n * width), local), *u = g + n * width;
    const quant::Product gateUp[] = {{w.gate.get(), x, Hd, g, width}, {w.up.get(), x, Hd, u, width}};
    products(gateUp, n);
    for (int t = 0; t < n; ++t)
        activate(g + t * width, u + t * width, g + t * width, width);
    product(*w.down, n, g, width, out, Hd);
}

} // namespace waste::model
