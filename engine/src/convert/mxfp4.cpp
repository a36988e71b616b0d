#include "convert/mxfp4.hpp"

#include <waste/waste.hpp>

#include <cmath>

namespace waste::convert {

float e2m1Value(uint8_t code)
{
    // Magnitudes for exponent/mantissa 0..7: subnormal 0 and 0.5, then 1, 1.5, 2, 3, 4, 6.
    static constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    const float m = kMagnitude[code & 7];
    return (code & 8) ? -m : m;
}

float e8m0Scale(uint8_t e)
{
    if (e == 255)
        return std::nanf("");
    return std::ldexp(1.0f, int(e) - 127);
}

void decodeMxfp4Row(std::span<const uint8_t> packed, std::span<const uint8_t> scales, std::span<float> out,
                    const std::string &what)
{
    const size_t n = out.size();
    if (packed.size() < (n + 1) / 2 || scales.size() < (n + kMxfp4Block - 1) / kMxfp4Block)
        throw Error(ErrorCode::Format, what + ": MXFP4 row shorter than its shape says");
    for (size_t b = 0; b * kMxfp4Block < n; ++b) {
        if (scales[b] == 255)
            throw Error(ErrorCode::Format, what + ": MXFP4 scale is NaN (E8M0 0xFF) in block " +
                                               std::to_string(b) + "; the source shard is damaged");
        const float s = e8m0Scale(scales[b]);
        const size_t end = std::min(n, (b + 1) * kMxfp4Block);
        for (size_t i = b * kMxfp4Block; i < end; ++i) {
            const uint8_t byte = packed[i / 2];
            const uint8_t code = (i & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 15);
            out[i] = e2m1Value(code) * s;
        }
    }
}

void decodeMxfp4Matrix(const uint8_t *packed, const uint8_t *scales, size_t rows, size_t cols, float *out,
                       const std::string &what)
{
    const size_t rowBytes = (cols + 1) / 2;
    const size_t rowScales = (cols + kMxfp4Block - 1) / kMxfp4Block;
    for (size_t r = 0; r < rows; ++r)
        decodeMxfp4Row({packed + r * rowBytes, rowBytes}, {scales + r * rowScales, rowScales},
                       {out + r * cols, cols}, what + " row " + std::to_string(r));
}

} // namespace waste::convert
