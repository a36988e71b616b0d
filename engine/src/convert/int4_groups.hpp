// INT4 with one bf16 scale per 32 inputs, the layout of compressed-tensors'
// pack-quantized releases (Kimi K2-Thinking, K2.5): `weight_packed` I32 [rows, cols/8]
// holding value+8 in nibbles, lowest nibble first, `weight_scale` BF16 [rows, cols/32],
// `weight_shape` I64 [2]. As little-endian bytes the packed words are nibble pairs, low
// nibble first, which is how native records store them (format/native_record.hpp).
//
// The encoder is the converter's q4 (bf16 and f32 releases) and the tiny generator's:
// per group the scale is bf16(amax / 7), so the largest magnitude maps to +-7 and is
// never clipped; values round to the nearest integer (ties to even) and clamp to
// [-8, 7]. No search over scales: conversion runs at the disk's speed.
#pragma once

#include <cstdint>

namespace waste::convert {

// One row of n inputs (a multiple of 32): packed gets n/2 bytes, scales n/32 bf16 (2n/32 bytes).
void encodeInt4G32Row(const float *w, int64_t n, uint8_t *packed, uint8_t *scales);
// The same with one scale per `group` inputs (the last group may be partial): the
// tiny generator's W4A16-style releases (groups of 128). scales gets ceil(n/group) bf16.
void encodeInt4GroupedRow(const float *w, int64_t n, int64_t group, uint8_t *packed, uint8_t *scales);

// One row decoded to f32 (exact: a 4-bit integer times a bf16).
void decodeInt4G32Row(const uint8_t *packed, const uint8_t *scales, int64_t n, float *out);

} // namespace waste::convert
