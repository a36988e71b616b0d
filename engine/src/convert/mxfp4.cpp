#include "convert/mxfp4.hpp"

#include <waste/waste.hpp>

#include <algorithm>
#include <cmath>

namespace waste::convert {

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

namespace {

// Nearest E2M1 code to x (already divided by the block scale); ties to the even code.
uint8_t nearestE2M1(float x)
{
    const float a = std::min(std::fabs(x), 6.0f);
    uint8_t best = 0;
    float bestErr = INFINITY;
    for (uint8_t c = 0; c < 8; ++c) {
        const float err = std::fabs(e2m1Value(c) - a);
        if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1) != 0)) {
            best = c;
            bestErr = err;
        }
    }
    return (x < 0.0f && best != 0) ? uint8_t(best | 8) : best;
}

} // namespace

void encodeMxfp4Row(std::span<const float> in, std::span<uint8_t> packed, std::span<uint8_t> scales)
{
    const size_t n = in.size();
    std::fill(packed.begin(), packed.begin() + long((n + 1) / 2), uint8_t(0));
    for (size_t b = 0; b * kMxfp4Block < n; ++b) {
        const size_t end = std::min(n, (b + 1) * kMxfp4Block);
        float amax = 0.0f;
        for (size_t i = b * kMxfp4Block; i < end; ++i)
            amax = std::max(amax, std::fabs(in[i]));
        int e = 127; // an all-zero block: scale 1
        if (amax > 0.0f)
            e = std::clamp(int(std::floor(std::log2(amax))) - 2 + 127, 0, 254);
        scales[b] = uint8_t(e);
        const float inv = 1.0f / e8m0Scale(uint8_t(e));
        for (size_t i = b * kMxfp4Block; i < end; ++i) {
            const uint8_t code = nearestE2M1(in[i] * inv);
            packed[i / 2] = uint8_t(packed[i / 2] | ((i & 1) ? code << 4 : code));
        }
    }
}

} // namespace waste::convert
