// MXFP4 (OCP microscaling FP4), the format Kimi K3's release stores its routed experts in:
// each weight is an E2M1 nibble (two per byte, the low nibble first) and every 32
// consecutive weights of a row share one E8M0 scale byte meaning 2^(e-127).
// Decoding is exact in f32: every E2M1 value times a power of two is representable.
#pragma once

#include "format/native_values.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace waste::convert {

inline constexpr size_t kMxfp4Block = 32;

// The element decoders are the container's (an e8m0 scale of 255 is NaN and is refused by
// decodeMxfp4Row).
using format::e2m1Value;
using format::e8m0Scale;

// Decodes one row of `n` weights (n a multiple of 2; the last block may be partial).
// packed: ceil(n/2) bytes; scales: ceil(n/32) bytes. Throws waste::Error(Format) naming
// `what` on a NaN scale or short input.
void decodeMxfp4Row(std::span<const uint8_t> packed, std::span<const uint8_t> scales, std::span<float> out,
                    const std::string &what);

// A [rows, cols] matrix stored as `<name>_packed` [rows, cols/2] and `<name>_scale`
// [rows, ceil(cols/32)].
void decodeMxfp4Matrix(const uint8_t *packed, const uint8_t *scales, size_t rows, size_t cols, float *out,
                       const std::string &what);

// Encodes one row the way the OCP MX spec quantizes: per block the shared scale is
// 2^(floor(log2 amax) - 2) (2 = E2M1's largest exponent), values are divided by it,
// rounded to the nearest E2M1 value (ties to the even code) and saturated at +-6.
// Used by the tiny K3 generator, which ships its experts like the release does.
void encodeMxfp4Row(std::span<const float> in, std::span<uint8_t> packed, std::span<uint8_t> scales);

} // namespace waste::convert
