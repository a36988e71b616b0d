// Nearest codebook entry for many 8-wide vectors at once: the converter's VQ3R search
// (k-means assignment and encoding). The squared distance is expanded,
//   |x - c|^2 = |x|^2 - 2 x.c + |c|^2,
// and |x|^2, the same for every entry, is left out, so each entry costs eight fused
// multiply-adds. Every level (scalar, AVX2, AVX-512) evaluates exactly
//   acc = norm[c]; acc = fma(x[d], m2[c][d], acc) for d = 0..7, in that order,
// with m2 = -2 * entry (exact), keeps the first entry whose acc is strictly below the
// best so far (starting from +inf), and so returns the same index and value bit for bit
// whatever the level: the choice cannot depend on the CPU. The SIMD sets put vectors,
// not entries, in the lanes, so each lane runs the scalar loop unchanged.
#pragma once

#include "quant/simd.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace waste::quant {

constexpr int kNearestDim = 8;

// A codebook prepared for the search.
struct NearestTable {
    int entries = 0;
    std::vector<float> m2;   // [entries][8]: -2 * entry
    std::vector<float> norm; // [entries]: |entry|^2, fused multiply-adds in order d = 0..7
};

// `values` holds `entries` x 8 floats, row by row.
NearestTable prepareNearestTable(const float *values, int entries);

struct NearestKernels {
    // x: n vectors of 8 floats, one after another. idx[i] gets the nearest entry of
    // vector i; part[i] (if part is not null) its |c|^2 - 2 x.c, so the squared
    // distance is part[i] + |x_i|^2.
    void (*search)(const float *m2, const float *norm, int entries, const float *x, size_t n, int32_t *idx, float *part);
};

const NearestKernels &scalarNearest();
const NearestKernels *avx2Nearest();   // nullptr where not compiled
const NearestKernels *avx512Nearest(); // nullptr where not compiled

const NearestKernels &nearestFor(SimdLevel lvl); // a specific level; falls back to scalar where not compiled
const NearestKernels &nearest();                 // the active level (quant::activeSimd())

// The search through the active level.
inline void nearestEntries(const NearestTable &t, const float *x, size_t n, int32_t *idx, float *part = nullptr) {
    nearest().search(t.m2.data(), t.norm.data(), t.entries, x, n, idx, part);
}

} // namespace waste::quant
