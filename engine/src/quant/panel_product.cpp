#include "quant/panel_product.hpp"

#include "compute/thread_pool.hpp"
#include "quant/panel_gemm.hpp"

#include <algorithm>
#include <vector>

namespace waste::quant {

PanelMatrix trunkPanels(const format::TrunkTensor &w)
{
    return {w.rows, w.cols, [&w](int64_t r0, float *panel) { decodeTrunkPanel(w, r0, panel); }};
}

PanelMatrix vqPanels(const VqMatrix &m)
{
    return {m.rows, m.cols, [m](int64_t r0, float *panel) { decodeVqPanel(m, r0, panel); }};
}

PanelMatrix nativePanels(const NativeMatrix &m)
{
    return {m.rows, m.cols, [m](int64_t r0, float *panel) { decodeNativePanel(m, r0, panel); }};
}

void panelProducts(std::span<const PanelJob> jobs, int64_t n, compute::ThreadPool &pool)
{
    if (n <= 0 || jobs.empty())
        return;
    // Row blocks of every job, in order: block b of job j is b - first[j].
    std::vector<int64_t> first(jobs.size() + 1, 0);
    int64_t maxCols = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
        first[j + 1] = first[j] + (jobs[j].m->rows + kPanelRows - 1) / kPanelRows;
        maxCols = std::max(maxCols, jobs[j].m->cols);
    }
    const int64_t blocks = first.back();
    const PanelGemm gemm = panelGemm();
    // ~0.01 ns a multiply-add at full width: 64 rows x cols x n of them, plus the decode.
    const int64_t work = std::max<int64_t>(1, maxCols * (n + 8) * kPanelRows / 64);
    pool.forRange(blocks, pool.grainFor(blocks, work), [&](int64_t b0, int64_t b1) {
        thread_local std::vector<float> panel;
        for (int64_t b = b0; b < b1; ++b) {
            const size_t j = size_t(std::upper_bound(first.begin(), first.end(), b) - first.begin() - 1);
            const PanelJob &job = jobs[j];
            const int64_t r0 = (b - first[j]) * kPanelRows;
            panel.resize(size_t(job.m->cols * kPanelRows));
            job.m->fill(r0, panel.data());
            gemm(panel.data(), job.m->cols, job.x, job.xStride, n, job.y + r0, job.yStride,
                 std::min<int64_t>(kPanelRows, job.m->rows - r0));
        }
    });
}

void panelProduct(const PanelMatrix &m, int64_t n, const float *x, int64_t xStride, float *y, int64_t yStride,
                  compute::ThreadPool &pool)
{
    const PanelJob job{&m, x, xStride, y, yStride};
    panelProducts(std::span<const PanelJob>(&job, 1), n, pool);
}

} // namespace waste::quant
