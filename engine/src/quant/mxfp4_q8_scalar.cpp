// The int8-activation MXFP4 row in portable code (the order mxfp4_q8.hpp states), the
// activation quantiser, and the choice of level.
#include "quant/mxfp4_q8.hpp"

#include "format/native_values.hpp"

#include <algorithm>
#include <cmath>

namespace waste::quant {

void quantizeQ8(const float *x, int64_t n, int8_t *q, float *d)
{
    for (int64_t g = 0; g * kQ8Group < n; ++g) {
        const float *xg = x + g * kQ8Group;
        float amax = 0.0f;
        for (int i = 0; i < kQ8Group; ++i)
            amax = std::max(amax, std::fabs(xg[i]));
        d[g] = amax / 127.0f;
        const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int i = 0; i < kQ8Group; ++i) // |x * inv| <= 127 up to rounding; the clamp keeps it there
            q[g * kQ8Group + i] = int8_t(std::clamp(std::nearbyint(xg[i] * inv), -127.0f, 127.0f));
    }
}

namespace {

// e2m1 codes doubled: 0, 0.5, 1, 1.5, 2, 3, 4, 6 (and negatives) times 2.
constexpr int8_t kDoubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

float mxfp4Q8(const uint8_t *packed, const uint8_t *scales, const int8_t *q, const float *d, int64_t n)
{
    float acc[8] = {};
    for (int64_t g = 0; g * kQ8Group < n; ++g) {
        int32_t isum = 0;
        for (int i = 0; i < kQ8Group; ++i) {
            const int64_t k = g * kQ8Group + i;
            const uint8_t byte = packed[k >> 1];
            isum += int32_t(kDoubled[(k & 1) ? (byte >> 4) : (byte & 15)]) * int32_t(q[k]);
        }
        const float c = d[g] * format::e8m0Scale(scales[g]);
        acc[g % 8] = acc[g % 8] + float(isum) * c;
    }
    return reduceQ8Lanes(acc);
}

} // namespace

Mxfp4Q8Row scalarMxfp4Q8() { return mxfp4Q8; }

Mxfp4Q8Row mxfp4Q8For(SimdLevel lvl)
{
    // AVX-512 machines have AVX2 and run its kernel (there is no 512-bit one yet).
    if ((lvl == SimdLevel::Avx512 || lvl == SimdLevel::Avx2) && avx2Mxfp4Q8())
        return avx2Mxfp4Q8();
    if (lvl == SimdLevel::Neon && neonMxfp4Q8())
        return neonMxfp4Q8();
    return mxfp4Q8;
}

Mxfp4Q8Row mxfp4Q8() { return mxfp4Q8For(activeSimd()); }

} // namespace waste::quant
