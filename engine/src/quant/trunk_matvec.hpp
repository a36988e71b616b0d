// y = W x for trunk tensors, f32 arithmetic over the stored (quantized) weights:
// per row, each group contributes scale * Σ q*x, groups summed in f32.
#pragma once

#include "format/trunk.hpp"

#include <cstdint>
#include <span>

namespace waste::compute {
class ThreadPool;
}

namespace waste::quant {

// Row r of W times x (x has W.cols elements).
float rowDot(const format::TrunkTensor &w, int64_t r, const float *x);
// y[0..rows) = W x.
void matvec(const format::TrunkTensor &w, const float *x, float *y);
// The same with the rows split over the pool's threads: each row's dot product is the
// same code in the same order, so y is the same bit for bit for any thread count.
void matvec(const format::TrunkTensor &w, const float *x, float *y, compute::ThreadPool &pool);
// Rows [r0, r0 + rows) of W times x into y[0..rows), split over the pool as matvec splits a
// whole matrix (the calibration times many copies of one matrix stacked in one tensor).
void matvecWindow(const format::TrunkTensor &w, const float *x, float *y, int64_t r0, int64_t rows,
                  compute::ThreadPool &pool);
// The same for n inputs at once (x_t at x + t·xStride, y_t at y + t·yStride): one pass
// over W's rows, each row dotted with every input while it is hot, and one split over the
// threads instead of n. Every y_t[r] is rowDot(W, r, x_t), so each equals its matvec bit
// for bit.
void matvecs(const format::TrunkTensor &w, int64_t n, const float *x, int64_t xStride, float *y, int64_t yStride,
             compute::ThreadPool &pool);
// Several products over n inputs each (a layer's projections of the same inputs) in one
// split over all their rows, so the threads meet once instead of once per matrix. Every
// row is computed by the code matvecs (n > 1) or matvec (n = 1) uses for it, so each y
// equals its own matvecs bit for bit.
struct Product {
    const format::TrunkTensor *w = nullptr;
    const float *x = nullptr; // input t at x + t·xStride
    int64_t xStride = 0;
    float *y = nullptr; // output t at y + t·yStride
    int64_t yStride = 0;
};
void matvecsTogether(std::span<const Product> products, int64_t n, compute::ThreadPool &pool);
// Rows [r0, r1) only.
void matvecRows(const format::TrunkTensor &w, const float *x, float *y, int64_t r0, int64_t r1);

} // namespace waste::quant
