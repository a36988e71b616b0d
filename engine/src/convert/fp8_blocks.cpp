#include "convert/fp8_blocks.hpp"

#include "format/bytes.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace waste::convert {

uint8_t encodeE4m3(float v)
{
    const uint8_t sign = std::signbit(v) ? 0x80 : 0;
    const float a = std::fabs(v);
    if (std::isnan(v))
        return 0x7f;
    if (a >= kE4m3Max)
        return sign | 0x7e; // 1.75 * 2^8 = 448, the largest finite value
    if (a < std::ldexp(1.0f, -6)) {
        // Subnormals step by 2^-9; 8 steps is the smallest normal, whose code is 8 too.
        const int m = static_cast<int>(std::nearbyint(std::ldexp(a, 9)));
        return sign | static_cast<uint8_t>(m);
    }
    int k;
    std::frexp(a, &k); // a = f 2^k, f in [0.5, 1): a in [2^(k-1), 2^k)
    int e = k - 1;
    int q = static_cast<int>(std::nearbyint(std::ldexp(a, 3 - e))); // 8..16 eighths
    if (q == 16) {
        q = 8;
        ++e;
    }
    const int code = ((e + 7) << 3) | (q - 8);
    return sign | static_cast<uint8_t>(std::min(code, 0x7e));
}

int64_t fp8BlockScaleBytes(int64_t rows, int64_t cols)
{
    const int64_t B = format::kFp8Block;
    return ((rows + B - 1) / B) * ((cols + B - 1) / B) * 4;
}

void encodeFp8Blocks(const float *w, int64_t rows, int64_t cols, uint8_t *q, uint8_t *scales)
{
    encodeFp8ScaledBlocks(w, rows, cols, format::kFp8Block, format::kFp8Block, q, scales);
}

void encodeFp8ScaledBlocks(const float *w, int64_t rows, int64_t cols, int64_t BR, int64_t BC, uint8_t *q, uint8_t *scales)
{
    const int64_t bc = (cols + BC - 1) / BC;
    for (int64_t r0 = 0; r0 < rows; r0 += BR)
        for (int64_t c0 = 0; c0 < cols; c0 += BC) {
            const int64_t r1 = std::min(rows, r0 + BR), c1 = std::min(cols, c0 + BC);
            float amax = 0.0f;
            for (int64_t r = r0; r < r1; ++r)
                for (int64_t c = c0; c < c1; ++c)
                    amax = std::max(amax, std::fabs(w[r * cols + c]));
            const float s = amax > 0.0f ? amax / kE4m3Max : 1.0f;
            uint32_t bits;
            std::memcpy(&bits, &s, 4);
            format::storeU32(scales + ((r0 / BR) * bc + c0 / BC) * 4, bits);
            for (int64_t r = r0; r < r1; ++r)
                for (int64_t c = c0; c < c1; ++c)
                    q[r * cols + c] = encodeE4m3(w[r * cols + c] / s);
        }
}

void decodeFp8Rows(const uint8_t *qRows, const uint8_t *scales, int64_t cols, int64_t row0, int64_t n, float *out)
{
    const int64_t B = format::kFp8Block, bc = (cols + B - 1) / B;
    for (int64_t r = row0; r < row0 + n; ++r)
        for (int64_t c = 0; c < cols; ++c)
            out[(r - row0) * cols + c] =
                format::e4m3Value(qRows[(r - row0) * cols + c]) * format::loadF32(scales + ((r / B) * bc + c / B) * 4);
}

} // namespace waste::convert
