#include "quant/trunk_matvec.hpp"

#include "compute/thread_pool.hpp"
#include "quant/simd.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <vector>

namespace waste::quant {

float rowDot(const format::TrunkTensor &w, int64_t r, const float *x)
{
    const Kernels &k = kernels();
    using format::TrunkFormat;
    if (!w.f32.empty())
        return k.dotF32(w.f32.data() + r * w.cols, x, w.cols);
    if (w.onDisk) {
        std::vector<float> row(static_cast<size_t>(w.cols));
        w.readRow(r, row.data());
        return k.dotF32(row.data(), x, w.cols);
    }
    const uint8_t *q = w.payload.data() + r * w.rowBytes;
    const float *sc = w.scales.data() + r * w.groups;
    switch (w.format) {
    case TrunkFormat::Q8G: return k.rowQ8(q, sc, x, w.cols, w.group);
    case TrunkFormat::Q4G: return k.rowQ4(q, sc, x, w.cols, w.group);
    case TrunkFormat::Q3G: {
        float acc = 0.0f;
        for (int64_t g = 0, i0 = 0; i0 < w.cols; ++g, i0 += w.group) {
            const int64_t i1 = i0 + w.group < w.cols ? i0 + w.group : w.cols;
            float inner = 0.0f;
            for (int64_t i = i0; i < i1; ++i) {
                const int64_t bit = 3 * i;
                const unsigned v = static_cast<unsigned>(q[bit >> 3]) | (static_cast<unsigned>(q[(bit >> 3) + 1]) << 8);
                inner += static_cast<float>(static_cast<int>((v >> (bit & 7)) & 7u) - 4) * x[i];
            }
            acc += sc[g] * inner;
        }
        return acc;
    }
    default: break;
    }
    throw Error(ErrorCode::Format, w.name + ": unsupported trunk format");
}

void matvecRows(const format::TrunkTensor &w, const float *x, float *y, int64_t r0, int64_t r1)
{
    for (int64_t r = r0; r < r1; ++r)
        y[r - r0] = rowDot(w, r, x);
}

void matvec(const format::TrunkTensor &w, const float *x, float *y) { matvecRows(w, x, y, 0, w.rows); }

void matvec(const format::TrunkTensor &w, const float *x, float *y, compute::ThreadPool &pool)
{
    matvecWindow(w, x, y, 0, w.rows, pool);
}

void matvecWindow(const format::TrunkTensor &w, const float *x, float *y, int64_t r0, int64_t rows,
                  compute::ThreadPool &pool)
{
    // ~0.125 ns per weight with the SIMD row kernels; rows read from disk cost a read each.
    const int64_t work = w.onDisk ? int64_t(1) << 20 : std::max<int64_t>(1, w.cols / 8);
    pool.forRange(rows, pool.grainFor(rows, work),
                  [&](int64_t a, int64_t b) { matvecRows(w, x, y + a, r0 + a, r0 + b); });
}

namespace {

// Rows [r0, r1) of y_t = W x_t for the n inputs: matvecs' body, shared with matvecsTogether.
void rowsOf(const format::TrunkTensor &w, int64_t n, const float *x, int64_t xStride, float *y, int64_t yStride,
            int64_t r0, int64_t r1)
{
    if (n == 1) { // matvec's own rows
        matvecRows(w, x, y + r0, r0, r1);
        return;
    }
    const Kernels &k = kernels();
    std::vector<float> row(w.onDisk ? static_cast<size_t>(w.cols) : 0);
    for (int64_t r = r0; r < r1; ++r) {
        if (w.onDisk) { // one read of the row for all inputs: rowDot's own arithmetic
            w.readRow(r, row.data());
            for (int64_t t = 0; t < n; ++t)
                y[t * yStride + r] = k.dotF32(row.data(), x + t * xStride, w.cols);
            continue;
        }
        if (w.format == format::TrunkFormat::Q4G && w.f32.empty() && k.rowQ4Many) {
            // Every input's result as rowDot gives it, the row's nibbles unpacked once.
            k.rowQ4Many(w.payload.data() + r * w.rowBytes, w.scales.data() + r * w.groups, x, xStride, n, w.cols,
                        w.group, y + r, yStride);
            continue;
        }
        for (int64_t t = 0; t < n; ++t)
            y[t * yStride + r] = rowDot(w, r, x + t * xStride);
    }
}

int64_t rowWork(const format::TrunkTensor &w, int64_t n)
{
    return w.onDisk ? int64_t(1) << 20 : std::max<int64_t>(1, n * w.cols / 8);
}

} // namespace

void matvecs(const format::TrunkTensor &w, int64_t n, const float *x, int64_t xStride, float *y, int64_t yStride,
             compute::ThreadPool &pool)
{
    if (n == 1) {
        matvec(w, x, y, pool);
        return;
    }
    pool.forRange(w.rows, pool.grainFor(w.rows, rowWork(w, n)),
                  [&](int64_t r0, int64_t r1) { rowsOf(w, n, x, xStride, y, yStride, r0, r1); });
}

void matvecsTogether(std::span<const Product> products, int64_t n, compute::ThreadPool &pool)
{
    // The products' rows end to end: row i of the split is row i - start[p] of product p.
    std::vector<int64_t> start(products.size() + 1, 0);
    double work = 0;
    for (size_t p = 0; p < products.size(); ++p) {
        start[p + 1] = start[p] + products[p].w->rows;
        work += double(products[p].w->rows) * double(rowWork(*products[p].w, n));
    }
    const int64_t rows = start.back();
    if (rows == 0)
        return;
    pool.forRange(rows, pool.grainFor(rows, std::max<int64_t>(1, int64_t(work / double(rows)))), [&](int64_t r0, int64_t r1) {
        size_t p = size_t(std::upper_bound(start.begin(), start.end(), r0) - start.begin()) - 1;
        for (; r0 < r1; ++p) {
            const int64_t e = std::min(r1, start[p + 1]);
            const Product &q = products[p];
            rowsOf(*q.w, n, q.x, q.xStride, q.y, q.yStride, r0 - start[p], e - start[p]);
            r0 = e;
        }
    });
}

} // namespace waste::quant
