// Routed-expert products through per-input lookup tables: the expert matrices stay
// in their VQ index form and are never expanded to full weights.
//
// Table: T[v][s][c] = Σ_d x[8v+d] * Cb[base + s][c][d]  (v < N/8, s < stages, c < entries)
// Apply (8-bit indices):  y[r] = ρ_r * Σ_v ( Σ_s T[v][s][i_s(r,v)] )
// Apply (VQ4P, 6-bit):    the table is first quantized to int8 per 32 positions.
#pragma once

#include "format/codebooks.hpp"

namespace waste::compute {
class ThreadPool;
}

#include <cstdint>
#include <vector>

namespace waste::quant {

struct Lut {
    int64_t positions = 0; // NV = N / 8
    int stages = 0;
    int stride = 0;        // floats per (v, s) row: entries padded to 16
    std::vector<float> table;        // positions * stages * stride (+ pad)
    // VQ4P only: int8 table and one scale per block of 32 positions.
    std::vector<int8_t> q8;
    std::vector<float> blockScale;
};

// Builds the table for input x (n floats, n % 8 == 0) against books base..base+stages-1.
// quantize8 additionally builds the int8 table used by VQ4P records.
// With a pool, table rows (positions) and int8 blocks are split over its threads; every
// entry is computed by the same code either way, so the table is the same bit for bit.
void buildLut(Lut &lut, const float *x, int64_t n, const format::Codebooks &books, int64_t base, int stages,
              bool quantize8, compute::ThreadPool *pool = nullptr);

// y[r] for r < rows, from a matrix payload (blocked by 64 rows) and f16 row scales.
// With a pool, blocks of 64 output rows are split over its threads (each row's sum is
// unchanged, so y is the same bit for bit).
void applyLut8(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y,
               compute::ThreadPool *pool = nullptr);
void applyLut4p(const Lut &lut, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t rows, float *y,
                compute::ThreadPool *pool = nullptr);
// Output rows [r0, r1) only (r0 a multiple of 64), of an 8-bit (packed6 false) or VQ4P
// matrix: the same values those rows get from the whole-matrix apply.
void applyLutRows(const Lut &lut, bool packed6, const uint8_t *indices, const uint8_t *rowScalesF16, int64_t r0,
                  int64_t r1, float *y);

} // namespace waste::quant
