#include "convert/int4_groups.hpp"

#include "format/bytes.hpp"
#include "format/f16.hpp"
#include "format/native_record.hpp"
#include "format/native_values.hpp"

#include <algorithm>
#include <cmath>

namespace waste::convert {

void encodeInt4G32Row(const float *w, int64_t n, uint8_t *packed, uint8_t *scales)
{
    encodeInt4GroupedRow(w, n, format::kInt4Group, packed, scales);
}

void encodeInt4GroupedRow(const float *w, int64_t n, int64_t G, uint8_t *packed, uint8_t *scales)
{
    for (int64_t g = 0; g * G < n; ++g) {
        const int64_t end = std::min(n, (g + 1) * G);
        float amax = 0.0f;
        for (int64_t i = g * G; i < end; ++i)
            amax = std::max(amax, std::fabs(w[i]));
        const uint16_t sb = format::floatToBf16(amax / 7.0f);
        format::storeU16(scales + 2 * g, sb);
        const float s = format::bf16ToFloat(sb);
        for (int64_t i = g * G; i < end; ++i) {
            const float q = s > 0.0f ? std::clamp(std::nearbyint(w[i] / s), -8.0f, 7.0f) : 0.0f;
            const uint8_t nib = static_cast<uint8_t>(static_cast<int>(q) + 8);
            if (i & 1)
                packed[i >> 1] = static_cast<uint8_t>(packed[i >> 1] | (nib << 4));
            else
                packed[i >> 1] = nib;
        }
    }
}

void decodeInt4G32Row(const uint8_t *packed, const uint8_t *scales, int64_t n, float *out)
{
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t byte = packed[i >> 1];
        const int v = ((i & 1) ? (byte >> 4) : (byte & 15)) - 8;
        out[i] = float(v) * format::bf16Value(scales + 2 * (i / format::kInt4Group));
    }
}

} // namespace waste::convert
