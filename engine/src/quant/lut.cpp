#include "quant/lut.hpp"

#include "format/expert_record.hpp"
#include "format/f16.hpp"
#include "quant/simd.hpp"

#include <algorithm>
#include <cmath>

namespace waste::quant {

namespace {
constexpr int kLutBlock = 32; // VQ4P: positions per int8 table scale
constexpr int64_t B = format::kIndexBlockRows;
} // namespace

void buildLut(Lut &lut, const float *x, int64_t n, const format::Codebooks &books, int64_t base, int stages,
              bool quantize8)
{
    const Kernels &k = kernels();
    lut.positions = n / 8;
    lut.stages = stages;
    lut.stride = books.paddedEntries();
    const size_t rowsOfTable = static_cast<size_t>(lut.positions * stages);
    lut.table.resize(rowsOfTable * static_cast<size_t>(lut.stride) + 256);
    std::fill(lut.table.end() - 256, lut.table.end(), 0.0f);
    for (int64_t v = 0; v < lut.positions; ++v)
        for (int s = 0; s < stages; ++s)
            k.lutRow(x + 8 * v, books.transposed(base + s), lut.stride,
                     lut.table.data() + (v * stages + s) * lut.stride);
    if (!quantize8)
        return;
    const int entries = books.entries();
    const int64_t nBlocks = (lut.positions + kLutBlock - 1) / kLutBlock;
    lut.blockScale.assign(static_cast<size_t>(nBlocks), 0.0f);
    lut.q8.assign(lut.table.size(), 0);
    for (int64_t b = 0; b < nBlocks; ++b) {
        const int64_t v0 = b * kLutBlock, v1 = std::min(lut.positions, v0 + kLutBlock);
        float m = 0.0f;
        for (int64_t v = v0; v < v1; ++v)
            for (int s = 0; s < stages; ++s) {
                const float *row = lut.table.data() + (v * stages + s) * lut.stride;
                for (int c = 0; c < entries; ++c)
                    m = std::max(m, std::fabs(row[c]));
            }
        const float inv = m > 0.0f ? 127.0f / m : 0.0f;
        lut.blockScale[static_cast<size_t>(b)] = m / 127.0f;
        for (int64_t v = v0; v < v1; ++v)
            for (int s = 0; s < stages; ++s) {
                const size_t at = static_cast<size_t>((v * stages + s) * lut.stride);
                for (int c = 0; c < entries; ++c) {
                    float q = std::nearbyint(lut.table[at + static_cast<size_t>(c)] * inv);
                    q = std::min(127.0f, std::max(-127.0f, q));
                    lut.q8[at + static_cast<size_t>(c)] = static_cast<int8_t>(q);
                }
            }
    }
}

void applyLut8(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y)
{
    const int64_t nv = lut.positions;
    const int S = lut.stages;
    const int64_t stride = lut.stride;
    const float *T = lut.table.data();
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t *base = indices + ((r / B) * nv * B + (r % B)) * S;
        float acc = 0.0f;
        for (int64_t v = 0; v < nv; ++v) {
            const uint8_t *ix = base + v * B * S;
            const float *tv = T + v * S * stride;
            float st = tv[ix[0]];
            for (int s = 1; s < S; ++s)
                st += tv[s * stride + ix[s]];
            acc += st;
        }
        y[r] = format::f16ToFloat(format::loadU16(rowScalesF16 + 2 * r)) * acc;
    }
}

void applyLut4p(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y)
{
    const int64_t nv = lut.positions;
    const int64_t stride = lut.stride;
    const int8_t *Q = lut.q8.data();
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t *base = indices + ((r / B) * nv * B + (r % B)) * 3;
        float acc = 0.0f;
        for (int64_t v0 = 0, blk = 0; v0 < nv; v0 += kLutBlock, ++blk) {
            const int64_t v1 = std::min(nv, v0 + kLutBlock);
            int32_t isum = 0;
            for (int64_t v = v0; v < v1; ++v) {
                const uint8_t *p = base + v * B * 3;
                const unsigned b0 = p[0], b1 = p[1], b2 = p[2];
                const unsigned i0 = b0 & 63u, i1 = ((b0 >> 6) | (b1 << 2)) & 63u, i2 = ((b1 >> 4) | (b2 << 4)) & 63u,
                               i3 = b2 >> 2;
                const int8_t *qv = Q + v * 4 * stride;
                isum += qv[i0] + qv[stride + i1] + qv[2 * stride + i2] + qv[3 * stride + i3];
            }
            acc += lut.blockScale[static_cast<size_t>(blk)] * static_cast<float>(isum);
        }
        y[r] = format::f16ToFloat(format::loadU16(rowScalesF16 + 2 * r)) * acc;
    }
}

} // namespace waste::quant
