#include "quant/lut.hpp"

#include "compute/thread_pool.hpp"
#include "format/expert_record.hpp"
#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "quant/simd.hpp"

#include <algorithm>
#include <cmath>

namespace waste::quant {

namespace {
constexpr int kLutBlock = 32; // VQ4P: positions per int8 table scale
constexpr int64_t B = format::kIndexBlockRows;

// The int8 table of blocks [b0, b1) of 32 positions: one scale per block from its largest
// magnitude, entries rounded to nearest.
void quantizeBlocks(Lut &lut, int entries, int64_t b0, int64_t b1)
{
    const int stages = lut.stages;
    for (int64_t b = b0; b < b1; ++b) {
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

// Both applies walk the index payload in its stored order (block of 64 rows, then vector
// position, then row) with 64 row accumulators, so the table row of a position stays hot.
// Every row still sums its stages first and its positions in increasing order.
// These do row blocks [blk0, blk1).
void apply8Blocks(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y,
                  int64_t blk0, int64_t blk1)
{
    const int64_t nv = lut.positions;
    const int S = lut.stages;
    const int64_t stride = lut.stride;
    const float *T = lut.table.data();
    float acc[B];
    for (int64_t r0 = blk0 * B; r0 < std::min(rows, blk1 * B); r0 += B) {
        const int64_t nr = std::min<int64_t>(B, rows - r0);
        std::fill(acc, acc + B, 0.0f);
        const uint8_t *blk = indices + (r0 / B) * nv * B * S;
        int64_t v = 0;
        if (S == 3) {
            // Loads bound this loop (bench: 105 µs for 1024 x 1024 before, 83 after). Two
            // positions at a time keep a row's sum in a register across them, and one 4-byte
            // load gives a row's three indices and a byte past them, unused; the block's last
            // row reads only its own three. Each row still adds its stages, then its
            // positions one by one in increasing order: the same sums, bit for bit.
            const int64_t rowBytes = B * 3;
            const int64_t full = nr - 1; // rows whose 4-byte load stays inside the block
            for (; v + 2 <= nv; v += 2) {
                const uint8_t *ix = blk + v * rowBytes;
                const float *t0 = T + v * 3 * stride, *u0 = t0 + 3 * stride;
                const float *t1 = t0 + stride, *t2 = t0 + 2 * stride, *u1 = u0 + stride, *u2 = u0 + 2 * stride;
                for (int64_t r = 0; r < full; ++r) {
                    const uint32_t w = format::loadU32(ix + r * 3), x = format::loadU32(ix + rowBytes + r * 3);
                    float a = acc[r];
                    a += (t0[w & 0xffu] + t1[(w >> 8) & 0xffu]) + t2[(w >> 16) & 0xffu];
                    a += (u0[x & 0xffu] + u1[(x >> 8) & 0xffu]) + u2[(x >> 16) & 0xffu];
                    acc[r] = a;
                }
                const uint8_t *p = ix + full * 3, *q = p + rowBytes;
                acc[full] += (t0[p[0]] + t1[p[1]]) + t2[p[2]];
                acc[full] += (u0[q[0]] + u1[q[1]]) + u2[q[2]];
            }
        }
        for (; v < nv; ++v) {
            const uint8_t *ix = blk + v * B * S;
            const float *tv = T + v * S * stride;
            for (int64_t r = 0; r < nr; ++r) {
                const uint8_t *p = ix + r * S;
                float st = tv[p[0]];
                for (int s = 1; s < S; ++s)
                    st += tv[s * stride + p[s]];
                acc[r] += st;
            }
        }
        for (int64_t r = 0; r < nr; ++r)
            y[r0 + r] = format::f16ToFloat(format::loadU16(rowScalesF16 + 2 * (r0 + r))) * acc[r];
    }
}

void apply4pBlocks(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y,
                   int64_t blk0, int64_t blk1)
{
    const int64_t nv = lut.positions;
    const int64_t stride = lut.stride;
    const int8_t *Q = lut.q8.data();
    float acc[B];
    int32_t isum[B];
    for (int64_t r0 = blk0 * B; r0 < std::min(rows, blk1 * B); r0 += B) {
        const int64_t nr = std::min<int64_t>(B, rows - r0);
        std::fill(acc, acc + B, 0.0f);
        const uint8_t *blk = indices + (r0 / B) * nv * B * 3;
        for (int64_t v0 = 0, lb = 0; v0 < nv; v0 += kLutBlock, ++lb) {
            const int64_t v1 = std::min(nv, v0 + kLutBlock);
            std::fill(isum, isum + B, 0);
            for (int64_t v = v0; v < v1; ++v) {
                const uint8_t *ix = blk + v * B * 3;
                const int8_t *qv = Q + v * 4 * stride;
                for (int64_t r = 0; r < nr; ++r) {
                    const uint8_t *p = ix + r * 3;
                    unsigned i[4];
                    format::unpackVq4p(p, i);
                    isum[r] += qv[i[0]] + qv[stride + i[1]] + qv[2 * stride + i[2]] + qv[3 * stride + i[3]];
                }
            }
            const float sigma = lut.blockScale[static_cast<size_t>(lb)];
            for (int64_t r = 0; r < nr; ++r)
                acc[r] += sigma * static_cast<float>(isum[r]);
        }
        for (int64_t r = 0; r < nr; ++r)
            y[r0 + r] = format::f16ToFloat(format::loadU16(rowScalesF16 + 2 * (r0 + r))) * acc[r];
    }
}

// Splits the row blocks of an apply over the pool (or runs them here).
template <typename F> void overRowBlocks(compute::ThreadPool *pool, int64_t rows, int64_t workPerBlock, F &&blocks)
{
    const int64_t nb = (rows + B - 1) / B;
    if (pool)
        pool->forRange(nb, pool->grainFor(nb, workPerBlock), blocks);
    else
        blocks(0, nb);
}

} // namespace

void buildLut(Lut &lut, const float *x, int64_t n, const format::Codebooks &books, int64_t base, int stages,
              bool quantize8, compute::ThreadPool *pool)
{
    const Kernels &k = kernels();
    lut.positions = n / 8;
    lut.stages = stages;
    lut.stride = books.paddedEntries();
    const size_t rowsOfTable = static_cast<size_t>(lut.positions * stages);
    lut.table.resize(rowsOfTable * static_cast<size_t>(lut.stride) + 256);
    std::fill(lut.table.end() - 256, lut.table.end(), 0.0f);
    auto positions = [&](int64_t v0, int64_t v1) {
        for (int64_t v = v0; v < v1; ++v)
            for (int s = 0; s < stages; ++s)
                k.lutRow(x + 8 * v, books.transposed(base + s), lut.stride,
                         lut.table.data() + (v * stages + s) * lut.stride);
    };
    if (pool)
        pool->forRange(lut.positions, pool->grainFor(lut.positions, int64_t(stages) * lut.stride / 2), positions);
    else
        positions(0, lut.positions);
    if (!quantize8)
        return;
    const int entries = books.entries();
    const int64_t nBlocks = (lut.positions + kLutBlock - 1) / kLutBlock;
    lut.blockScale.assign(static_cast<size_t>(nBlocks), 0.0f);
    lut.q8.assign(lut.table.size(), 0);
    auto blocks = [&](int64_t b0, int64_t b1) { quantizeBlocks(lut, entries, b0, b1); };
    if (pool)
        pool->forRange(nBlocks, pool->grainFor(nBlocks, int64_t(kLutBlock) * stages * entries), blocks);
    else
        blocks(0, nBlocks);
}

void applyLut8(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y,
               compute::ThreadPool *pool)
{
    overRowBlocks(pool, rows, B * lut.positions * lut.stages / 2,
                  [&](int64_t b0, int64_t b1) { apply8Blocks(lut, indices, rowScalesF16, rows, y, b0, b1); });
}

void applyLut4p(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y,
                compute::ThreadPool *pool)
{
    overRowBlocks(pool, rows, B * lut.positions * 3 / 2,
                  [&](int64_t b0, int64_t b1) { apply4pBlocks(lut, indices, rowScalesF16, rows, y, b0, b1); });
}

void applyLutRows(const Lut &lut, bool packed6, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t r0,
                  int64_t r1, float *y)
{
    if (packed6)
        apply4pBlocks(lut, indices, rowScalesF16, r1, y, r0 / B, (r1 + B - 1) / B);
    else
        apply8Blocks(lut, indices, rowScalesF16, r1, y, r0 / B, (r1 + B - 1) / B);
}

} // namespace waste::quant
