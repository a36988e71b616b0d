// Residual vector quantization of routed experts (VQ3R, waste-engine.md §2.4–2.6,
// §3.7): each row is divided by its amax (stored as an f16 scale), cut into 8-wide
// vectors, and each vector is coded by `stages` greedy nearest-neighbour picks from
// per-(layer, matrix kind) codebooks of 256 entries fitted by k-means on residuals.
// Index bytes are blocked by 64 rows: [row_block][vector][row_in_block][stage].
// Nearest entries are found by quant/nearest_entry (SIMD, the same picks on every CPU).
#pragma once

#include "format/expert_record.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace waste::convert {

// What the converter writes: VQ3R (3 stages of 8-bit indices). Vector size and index
// blocking are the container's (format/expert_record.hpp); index bytes of a matrix are
// format::indexBytes(rows, cols, stages, indexBits).
struct VqGeometry {
    int stages = 3;
    int entries = 256;
    static constexpr int dim = format::kVecDim;
    static constexpr int block = format::kIndexBlockRows;
    static constexpr int indexBits = 8;
};

// One codebook: entries x dim values, kept both as stored f16 bits and as the floats
// a reader decodes from them (subnormals flushed, as the reference does).
struct Codebook {
    std::vector<uint16_t> half;
    std::vector<float> value;
};

struct KMeansOptions {
    int iterations = 10;
    int threads = 1;
    uint64_t seed = 0;
};

// Fits `geom.stages` residual codebooks to `count` vectors of geom.dim floats.
// Deterministic for a given seed whatever the thread count.
std::vector<Codebook> fitResidualCodebooks(std::span<const float> vectors, const VqGeometry &geom,
                                           const KMeansOptions &options);

// Row scale of a matrix row: the f16 of its amax (0 for an all-zero row).
uint16_t rowScaleHalf(const float *row, int64_t n);

// Working memory of vqEncodeMatrix, kept by a caller that encodes many matrices so that
// each one does not allocate, zero and fault in fresh pages (a tenth of a conversion).
struct VqScratch {
    std::vector<float> x;
    std::vector<int32_t> idx;
};

// Encodes a [rows, cols] matrix: blocked index bytes into `indices` (format::indexBytes),
// per-row f16 scales into `scales` (rows values). `books` are the matrix kind's stages.
void vqEncodeMatrix(const float *w, int64_t rows, int64_t cols, const std::vector<Codebook> &books,
                    const VqGeometry &geom, uint8_t *indices, uint16_t *scales, VqScratch *scratch = nullptr);

// Reconstruction, for checks: rows*cols floats.
void vqDecodeMatrix(const uint8_t *indices, const uint16_t *scales, int64_t rows, int64_t cols,
                    const std::vector<Codebook> &books, const VqGeometry &geom, float *out);

} // namespace waste::convert
