// Products of stored matrices with many inputs (a prompt's pass): y_t = W x_t for t < n,
// W decoded 64 rows at a time into a panel (quant/panel_decode.hpp) that every input is then
// multiplied against (quant/panel_gemm.hpp). Row blocks are split over the pool, each
// decoded by the thread that multiplies it, so a weight is expanded once per product, not
// once per input, and never held whole. Each output is the kernel's ordered fused sum, so
// y does not depend on the thread count, on n, or on how the rows are split.
#pragma once

#include "format/trunk.hpp"
#include "quant/panel_decode.hpp"

#include <cstdint>
#include <functional>
#include <span>

namespace waste::compute {
class ThreadPool;
}

namespace waste::quant {

// A matrix as panels: `fill(r0, panel)` writes rows [r0, r0 + 64) k-major.
struct PanelMatrix {
    int64_t rows = 0, cols = 0;
    std::function<void(int64_t r0, float *panel)> fill;
};

PanelMatrix trunkPanels(const format::TrunkTensor &w);
PanelMatrix vqPanels(const VqMatrix &m);
PanelMatrix nativePanels(const NativeMatrix &m);

// One product of a call: input t at x + t * xStride, output t at y + t * yStride.
struct PanelJob {
    const PanelMatrix *m = nullptr;
    const float *x = nullptr;
    int64_t xStride = 0;
    float *y = nullptr;
    int64_t yStride = 0;
};

// Every job over the same n inputs, their row blocks in one split over the pool (the
// threads meet once, not once per matrix).
void panelProducts(std::span<const PanelJob> jobs, int64_t n, compute::ThreadPool &pool);
// One matrix.
void panelProduct(const PanelMatrix &m, int64_t n, const float *x, int64_t xStride, float *y, int64_t yStride,
                  compute::ThreadPool &pool);

} // namespace waste::quant
