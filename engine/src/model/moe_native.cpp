// A routed expert kept in its release's encoding (MXFP4, FP8B128, INT4G32, BF16): gate
// and up row by row from the record, the activation, then down. Each output row is one
// row kernel call on the whole input, so splitting rows over the pool's threads (as the
// VQ path splits its blocks) never changes a value. MXFP4 experts may take their inputs
// as int8 (WASTE_NATIVE_ACTIVATIONS, forward.hpp).
#include "model/forward.hpp"
#include "quant/mxfp4_q8.hpp"
#include "quant/native_matvec.hpp"

#include <algorithm>
#include <vector>

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
    if (m_int8Activations) {
        // MXFP4 with int8 activations (quant/mxfp4_q8.hpp): x quantised once for gate and
        // up, the activation once for down. The buffers are this call's own: a prefill runs
        // one expert's users on several threads at once.
        std::vector<int8_t> q(size_t(std::max(Im, W)));
        std::vector<float> d(q.size() / quant::kQ8Group);
        quant::quantizeQ8(x, W, q.data(), d.data());
        m_pool.forRange(2 * Im, m_pool.grainFor(2 * Im, W), [&](int64_t r0, int64_t r1) {
            if (r0 < Im)
                quant::nativeMatRowsQ8(gate, q.data(), d.data(), r0, std::min(r1, Im), g);
            if (r1 > Im)
                quant::nativeMatRowsQ8(up, q.data(), d.data(), std::max(r0, Im) - Im, r1 - Im, u);
        });
        activate(g, u, g, Im);
        quant::quantizeQ8(g, Im, q.data(), d.data());
        m_pool.forRange(W, m_pool.grainFor(W, Im), [&](int64_t r0, int64_t r1) { quant::nativeMatRowsQ8(down, q.data(), d.data(), r0, r1, y); });
        return;
    }
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

void Forward::nativeExperts(std::span<const NativeJob> jobs, int layer)
{
    const int64_t Im = m_c.moeInter, W = m_c.expertWidth(), J = static_cast<int64_t>(jobs.size());
    if (J == 0)
        return;
    if (J == 1 || m_int8Activations) {
        m_g.resize(static_cast<size_t>(Im));
        m_u.resize(static_cast<size_t>(Im));
        for (const NativeJob &j : jobs)
            nativeExpert(j.record, j.x, m_g.data(), m_u.data(), j.y, layer, j.expert);
        return;
    }
    const uint8_t fmt = m_manifest.quant.native;
    std::vector<quant::NativeMatrix> mats(static_cast<size_t>(3 * J));
    for (int64_t j = 0; j < J; ++j)
        for (int which = 0; which < 3; ++which)
            mats[static_cast<size_t>(3 * j + which)] =
                quant::nativeMatrix(fmt, jobs[static_cast<size_t>(j)].record, m_nativeLayout, which, Im, W);
    m_jobsG.resize(static_cast<size_t>(J * Im));
    m_jobsU.resize(static_cast<size_t>(J * Im));
    // Row r of the first split is row r % (2 Im) of job r / (2 Im): gate's, then up's.
    m_pool.forRange(J * 2 * Im, m_pool.grainFor(J * 2 * Im, W), [&](int64_t r0, int64_t r1) {
        while (r0 < r1) {
            const int64_t j = r0 / (2 * Im), base = j * 2 * Im;
            const int64_t a = r0 - base, e = std::min(r1, base + 2 * Im) - base; // rows [a, e) of job j
            const NativeJob &job = jobs[static_cast<size_t>(j)];
            if (a < Im)
                quant::nativeMatRows(mats[static_cast<size_t>(3 * j)], job.x, a, std::min(e, Im), m_jobsG.data() + j * Im);
            if (e > Im)
                quant::nativeMatRows(mats[static_cast<size_t>(3 * j + 1)], job.x, std::max(a, Im) - Im, e - Im,
                                     m_jobsU.data() + j * Im);
            r0 = base + e;
        }
    });
    for (int64_t j = 0; j < J; ++j) {
        float *g = m_jobsG.data() + j * Im, *u = m_jobsU.data() + j * Im;
        addExpertBias(layer, jobs[static_cast<size_t>(j)].expert, g, u);
        activate(g, u, g, Im);
    }
    m_pool.forRange(J * W, m_pool.grainFor(J * W, Im), [&](int64_t r0, int64_t r1) {
        while (r0 < r1) {
            const int64_t j = r0 / W, base = j * W, e = std::min(r1, base + W);
            quant::nativeMatRows(mats[static_cast<size_t>(3 * j + 2)], m_jobsG.data() + j * Im, r0 - base, e - base,
                                 jobs[static_cast<size_t>(j)].y);
            r0 = e;
        }
    });
    for (const NativeJob &j : jobs)
        addDownBias(layer, j.expert, j.y);
}

} // namespace waste::model
