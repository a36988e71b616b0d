// The container's grouped integer trunk formats (waste-engine.md §2.3): per row,
// groups of 128 inputs share one f16 scale; rows are padded to whole groups.
//   Q8G: int8 q in [-127, 127], scale = amax/127
//   Q4G: q in [-8, 7] stored as q+8 nibbles, low nibble first, scale = amax/7
// Payload is rows x rowBytes, followed by rows x groups f16 scales (row-major).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace waste::convert {

enum class TrunkFmt : int { F32 = 0, Q8G = 2, Q4G = 3 };

inline constexpr int kGroup = 128;

inline int64_t groupsPerRow(int64_t n) { return (n + kGroup - 1) / kGroup; }
int64_t groupedRowBytes(TrunkFmt fmt, int64_t n);
// Bytes of payload and of scales for a [rows, n] tensor.
int64_t groupedPayloadBytes(TrunkFmt fmt, int64_t rows, int64_t n);
int64_t groupedScaleBytes(int64_t rows, int64_t n);

// Quantizes `rows` rows of length n (row-major floats) into payload (rows*rowBytes)
// and f16 scales (rows*groups).
void quantizeGrouped(TrunkFmt fmt, const float *src, int64_t rows, int64_t n, uint8_t *payload, uint16_t *scales);

// Inverse, for checks: writes rows*n floats.
void dequantizeGrouped(TrunkFmt fmt, const uint8_t *payload, const uint16_t *scales, int64_t rows, int64_t n, float *dst);

} // namespace waste::convert
