// A routed expert kept in its release's encoding (MXFP4, FP8B128, INT4G32, BF16): gate
// and up row by row from the record, the activation, then down. Each output row is one
// row kernel call on the whole input, so splitting rows over the pool's threads (as the
// VQ path splits its blocks) never changes a value.
#include "model/forward.hpp"
#include "quant/native_matvec.hpp"

#include <algorithm>

namespace waste::model {

void Forward::addExpertBias(int layer, int expert, float *g, float *u) const
{
    const TensorPtr &b = layer < 0 ? nullptr : m_w.layers[size_t(layer)].moeW.gateUpBias;
    if (!b)
        return;
    const int64_t Im = m_c.moeInter;
    const float *row = b->f32.data() + int64_t(expert) * 2 * Im;
    for (int64_t i = 0; i < Im; ++i) {
        g[i] += row[2 * i];
        u[i] += row[2 * i + 1];
    }
}

void Forward::addDownBias(int layer, int expert, float *y) const
{
    const TensorPtr &b = layer < 0 ? nullptr : m_w.layers[size_t(layer)].moeW.downBias;
    if (!b)
        return;
    const int64_t W = m_c.expertWidth();
    const float *row = b->f32.data() + int64_t(expert) * W;
    for (int64_t i = 0; i < W; ++i)
        y[i] += row[i];
}

void Forward::nativeExpert(const uint8_t *record, const float *x, float *g, float *u, float *y, int layer, int expert)
{
    const int64_t Im = m_c.moeInter, W = m_c.expertWidth();
    const uint8_t fmt = m_manifest.quant.native;
    const quant::NativeMatrix gate = quant::nativeMatrix(fmt, record, m_nativeLayout, 0, Im, W);
    const quant::NativeMatrix up = quant::nativeMatrix(fmt, record, m_nativeLayout, 1, Im, W);
    const quant::NativeMatrix down = quant::nativeMatrix(fmt, record, m_nativeLayout, 2, Im, W);
    // Gate and up in one split: rows [0, Im) are gate's, [Im, 2 Im) up's. About a
    // nanosecond per weight in the scalar kernels.
    m_pool.forRange(2 * Im, m_pool.grainFor(2 * Im, W), [&](int64_t r0, int64_t r1) {
        if (r0 < Im)
            quant::nativeMatRows(gate, x, r0, std::min(r1, Im), g);
        if (r1 > Im)
            quant::nativeMatRows(up, x, std::max(r0, Im) - Im, r1 - Im, u);
    });
    addExpertBias(layer, expert, g, u);
    activate(g, u, g, Im);
    m_pool.forRange(W, m_pool.grainFor(W, Im), [&](int64_t r0, int64_t r1) { quant::nativeMatRows(down, g, r0, r1, y); });
    addDownBias(layer, expert, y);
}

} // namespace waste::model
