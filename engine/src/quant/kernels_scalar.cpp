// Portable reference kernels: the summation orders the specification states.
#include "quant/simd.hpp"

namespace waste::quant {
namespace {

float dotF32(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        s += a[i] * b[i];
    return s;
}

float rowQ8(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g)
{
    float acc = 0.0f;
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        float inner = 0.0f;
        for (int64_t i = i0; i < i1; ++i)
            inner += static_cast<float>(static_cast<int8_t>(q[i])) * x[i];
        acc += scale[k] * inner;
    }
    return acc;
}

float rowQ4(const uint8_t *q, const float *scale, const float *x, int64_t n, int64_t g)
{
    float acc = 0.0f;
    for (int64_t k = 0, i0 = 0; i0 < n; ++k, i0 += g) {
        const int64_t i1 = i0 + g < n ? i0 + g : n;
        float inner = 0.0f;
        for (int64_t i = i0; i < i1; ++i) {
            const uint8_t b = q[i >> 1];
            const int v = ((i & 1) ? (b >> 4) : (b & 0x0f)) - 8;
            inner += static_cast<float>(v) * x[i];
        }
        acc += scale[k] * inner;
    }
    return acc;
}

void lutRow(const float *x8, const float *bookT, int paddedEntries, float *out)
{
    for (int c = 0; c < paddedEntries; ++c) {
        const float *col = bookT + (c / 16) * 128 + c % 16;
        float s = 0.0f;
        for (int d = 0; d < 8; ++d)
            s += x8[d] * col[d * 16];
        out[c] = s;
    }
}

const Kernels kScalar{dotF32, rowQ8, rowQ4, lutRow, nullptr}; // rowQ4Many: rowQ4 per input

} // namespace

const Kernels &scalarKernels() { return kScalar; }

} // namespace waste::quant
