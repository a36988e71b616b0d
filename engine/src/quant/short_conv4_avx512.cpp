// The kernel-4 short convolution 16 channels at a time (AVX-512F): the body in
// quant/short_conv4_lanes.hpp, compiled here for this instruction set.
#include "quant/short_conv4.hpp"

#if defined(__x86_64__)
#include "quant/short_conv4_lanes.hpp"

namespace waste::quant {
namespace {

__attribute__((target("avx512f"))) void shortConv4(float *x, int64_t xStride, int64_t tokens, const float *w, float *ring,
                                                 int64_t C)
{
    shortConv4Lanes<16>(x, xStride, tokens, w, ring, C);
}

} // namespace

ShortConv4 avx512ShortConv4() { return shortConv4; }

} // namespace waste::quant

#else
namespace waste::quant {
ShortConv4 avx512ShortConv4() { return nullptr; }
} // namespace waste::quant
#endif
