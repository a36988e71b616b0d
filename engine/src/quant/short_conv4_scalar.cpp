// The kernel-4 short convolution's reference order (quant/short_conv4.hpp), and the choice
// of level.
#include "quant/short_conv4.hpp"

namespace waste::quant {

namespace {

void shortConv4(float *x, int64_t xStride, int64_t tokens, const float *w, float *ring, int64_t C)
{
    for (int64_t c = 0; c < C; ++c) {
        const float *wc = w + c * 4;
        float *rc = ring + c * 3;
        float r0 = rc[0], r1 = rc[1], r2 = rc[2];
        for (int64_t t = 0; t < tokens; ++t) {
            float &xc = x[t * xStride + c];
            const float in = xc;
            float y = 0.0f;
            y += r0 * wc[0];
            y += r1 * wc[1];
            y += r2 * wc[2];
            y += in * wc[3];
            xc = y;
            r0 = r1;
            r1 = r2;
            r2 = in;
        }
        rc[0] = r0;
        rc[1] = r1;
        rc[2] = r2;
    }
}

} // namespace

ShortConv4 scalarShortConv4() { return shortConv4; }

ShortConv4 shortConv4For(SimdLevel lvl)
{
    if (lvl == SimdLevel::Avx512 && avx512ShortConv4())
        return avx512ShortConv4();
    if ((lvl == SimdLevel::Avx512 || lvl == SimdLevel::Avx2) && avx2ShortConv4())
        return avx2ShortConv4();
    return shortConv4; // NEON: the scalar order (no vector level yet)
}

ShortConv4 shortConv4() { return shortConv4For(activeSimd()); }

} // namespace waste::quant
