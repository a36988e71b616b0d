#include "convert/grouped_quant.hpp"

#include "format/f16.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace waste::convert {

using format::TrunkFormat;

namespace {

// Rounds to the nearest integer, ties away from zero, then clamps: std::lround's result,
// without its libm call (about 8 % of a trunk's conversion was spent there). v is clamped
// first to [lo-1, hi+1] (so no cast overflows), in double, where v + 0.5 is exact for every
// float in that range (no early rounding of 0.49999997 up to 1), and then truncated after
// adding half away from zero: ties go away from zero, as lround's do. NaN gives 0, as the
// cast of lround's out-of-range result did before. tst_convert_quant checks it against
// lround on ties, near-ties and random values.
inline int quantizeValue(float x, float inv, int lo, int hi) {
    const float v = x * inv;
    const double d = v == v ? std::clamp(double(v), double(lo) - 1.0, double(hi) + 1.0) : 0.0;
    const int q = static_cast<int>(d + std::copysign(0.5, d));
    return std::clamp(q, lo, hi);
}

} // namespace

void quantizeGrouped(TrunkFormat fmt, const float *src, int64_t rows, int64_t n, uint8_t *payload, uint16_t *scales) {
    const int64_t G = format::kTrunkGroup;
    const int64_t ng = format::trunkGroups(n, G);
    const int64_t rowBytes = format::trunkRowBytes(fmt, n, G);
    const int qmax = fmt == TrunkFormat::Q8G ? 127 : 7;
    const int qmin = fmt == TrunkFormat::Q8G ? -127 : -8;
    for (int64_t r = 0; r < rows; ++r) {
        const float *row = src + r * n;
        uint8_t *out = payload + r * rowBytes;
        if (fmt == TrunkFormat::Q8G) std::memset(out, 0, static_cast<size_t>(rowBytes));
        else std::memset(out, 0x88, static_cast<size_t>(rowBytes)); // padding decodes to 0
        for (int64_t g = 0; g < ng; ++g) {
            const int64_t b = g * G, e = std::min<int64_t>(n, b + G);
            float amax = 0.0f;
            for (int64_t i = b; i < e; ++i) amax = std::max(amax, std::fabs(row[i]));
            // The stored (rounded) scale is what the reader multiplies by, so quantize against it.
            uint16_t hs = format::floatToF16(std::min(amax / static_cast<float>(qmax), 65504.0f));
            float scale = format::f16ToFloat(hs);
            if (scale == 0.0f && amax > 0.0f) { hs = 1; scale = format::f16ToFloat(hs); } // tiny group: smallest subnormal
            scales[r * ng + g] = hs;
            const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
            for (int64_t i = b; i < e; ++i) {
                const int q = quantizeValue(row[i], inv, qmin, qmax);
                if (fmt == TrunkFormat::Q8G) {
                    out[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
                } else {
                    const uint8_t nib = static_cast<uint8_t>(q + 8);
                    uint8_t &byte = out[i / 2];
                    byte = (i & 1) ? static_cast<uint8_t>((byte & 0x0f) | (nib << 4))
                                   : static_cast<uint8_t>((byte & 0xf0) | nib);
                }
            }
        }
    }
}

void dequantizeGrouped(TrunkFormat fmt, const uint8_t *payload, const uint16_t *scales, int64_t rows, int64_t n, float *dst) {
    const int64_t G = format::kTrunkGroup;
    const int64_t ng = format::trunkGroups(n, G);
    const int64_t rowBytes = format::trunkRowBytes(fmt, n, G);
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t *in = payload + r * rowBytes;
        for (int64_t i = 0; i < n; ++i) {
            int q;
            if (fmt == TrunkFormat::Q8G) q = static_cast<int8_t>(in[i]);
            else q = ((i & 1) ? (in[i / 2] >> 4) : (in[i / 2] & 0x0f)) - 8;
            dst[r * n + i] = static_cast<float>(q) * format::f16ToFloat(scales[r * ng + i / G]);
        }
    }
}

} // namespace waste::convert
