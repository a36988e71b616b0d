// Quantised source layouts whose values a native record can hold but whose bytes it
// cannot copy: the same e4m3 or int4 elements with their scales laid out otherwise.
//   FP8Scaled: e4m3 [rows, cols] and one scale per blockRows x blockCols block, as
//     compressed-tensors' float-quantized releases store it per tensor (`weight_scale`
//     [1]) or per row ("channel": [rows, 1]), or DeepSeek-style `_scale_inv` blocks of
//     another size (`weight_block_size` in the config, e.g. 64x64).
//   INT4Grouped: compressed-tensors pack-quantized int4 (words as in INT4G32) with one
//     bf16 scale per `group` inputs other than 32 (W4A16 releases use 128).
// Decoding gives the exact values (FP8: e4m3 * scale, one f32 rounding, as for FP8B128).
// A native record holds them exactly when every record block lies inside one source
// block, so one source scale covers it: FP8 blocks of whole multiples of 128 (or a whole
// dimension), INT4 groups of multiples of 32. Then the record's scales are the source's,
// repeated; the elements are copied. Other layouts would need new values or a scale
// per record block the source does not have, and native is refused for them.
#pragma once

#include "convert/model_source.hpp"

#include <cstdint>
#include <string>

namespace waste::convert {

// "FP8 e4m3 with one scale per 64x64 block", "... per row", "... per tensor", "INT4
// with one scale per 128 inputs": for messages that name a layout.
std::string scaledLayoutText(const SourceTensor &t);

// The native record format that holds a FP8Scaled / INT4Grouped tensor's values exactly
// (FP8B128, INT4G32), or 0 with the reason in *why.
uint8_t exactNativeFormat(const SourceTensor &t, std::string *why);

// Scales stored as F32, BF16 or F16 (little-endian), as f32 (exact for all three).
void scalesToF32(DType stored, const uint8_t *bytes, int64_t n, float *out);

// Rows [row0, row0+n) of a FP8Scaled tensor: qRows holds those rows' e4m3 bytes, scales
// all of the tensor's block scales (row-major over the block grid).
void decodeFp8ScaledRows(const SourceTensor &t, const uint8_t *qRows, const float *scales, int64_t row0, int64_t n,
                         float *out);

// One row of an INT4Grouped tensor (cols inputs; scales: that row's bf16 group scales).
void decodeInt4GroupedRow(const uint8_t *packed, const uint8_t *scales, int64_t cols, int64_t group, float *out);

// The record's scales from the source's, where exactNativeFormat says they fit (throws
// Error(Unsupported) with scaledLayoutText otherwise): FP8B128's f32 per 128x128 block
// from all f32 block scales; INT4G32's bf16 per 32 from the source's bf16 group scales.
void fp8ScalesToBlock128(const SourceTensor &t, const float *scales, uint8_t *out);
void int4ScalesToGroup32(const SourceTensor &t, const uint8_t *scales, uint8_t *out);

// The scale count of a scaled tensor's blocks along each dimension.
inline int64_t blocksAlong(int64_t dim, int64_t block) { return (dim + block - 1) / block; }

} // namespace waste::convert
