// FP8 with 128x128 block scales, the layout of DeepSeek-V3, Kimi K2 and MiniMax releases:
// a [rows, cols] `weight` of E4M3 bytes and an F32 `weight_scale_inv` of
// [ceil(rows/128), ceil(cols/128)], one multiplier per block (w = e4m3(q) * s).
// The encoder quantises the way those releases were made (scale = block amax / 448,
// values rounded to the nearest E4M3, ties to even, saturated at 448); the tiny-model
// generator uses it to ship FP8 experts.
#pragma once

#include <cstdint>
#include <string>

namespace waste::convert {

inline constexpr float kE4m3Max = 448.0f;

// The nearest E4M3 ("fn": no infinities) code of v, ties to the even code, saturated.
uint8_t encodeE4m3(float v);

// Bytes of the block scales of a [rows, cols] matrix.
int64_t fp8BlockScaleBytes(int64_t rows, int64_t cols);

// Encodes a [rows, cols] f32 matrix: q gets rows*cols bytes, scales fp8BlockScaleBytes.
void encodeFp8Blocks(const float *w, int64_t rows, int64_t cols, uint8_t *q, uint8_t *scales);
// The same with blocks of br x bc (clipped at the edges): per tensor (br = rows, bc = cols),
// per row (1, cols) or other blocks, as the scaled layouts store them (scaled_layouts.hpp).
// scales gets one f32 per block, row-major over the block grid.
void encodeFp8ScaledBlocks(const float *w, int64_t rows, int64_t cols, int64_t br, int64_t bc, uint8_t *q, uint8_t *scales);

// Rows [row0, row0+n) decoded to f32 (e4m3 * block scale, one f32 rounding): what a
// reader of the checkpoint gets. qRows holds those n rows; scales are the whole matrix's.
void decodeFp8Rows(const uint8_t *qRows, const uint8_t *scales, int64_t cols, int64_t row0, int64_t n, float *out);

} // namespace waste::convert
