// The converter's quantizers for the container's grouped integer trunk formats
// (waste-engine.md §2.3; sizes in format/trunk_layout.hpp): per row, groups of 128
// inputs share one f16 scale; rows are padded to whole groups.
//   Q8G: int8 q in [-127, 127], scale = amax/127
//   Q4G: q in [-8, 7] stored as q+8 nibbles, low nibble first, scale = amax/7
// Payload is rows x rowBytes, followed by rows x groups f16 scales (row-major).
#pragma once

#include "format/trunk_layout.hpp"

#include <cstdint>

namespace waste::convert {

// Quantizes `rows` rows of length n (row-major floats) into payload (rows x
// trunkRowBytes) and f16 scales (rows x trunkGroups). fmt is Q8G or Q4G; group 128.
// Rows are independent, so callers may split a matrix's rows between threads and get
// the same bytes.
void quantizeGrouped(format::TrunkFormat fmt, const float *src, int64_t rows, int64_t n, uint8_t *payload, uint16_t *scales);

// Inverse, for checks: writes rows*n floats.
void dequantizeGrouped(format::TrunkFormat fmt, const uint8_t *payload, const uint16_t *scales, int64_t rows, int64_t n,
                       float *dst);

} // namespace waste::convert
