// Half an e8m0 scale, 2^(e-128), straight from its bits: the SIMD MXFP4 kernels look up
// e2m1 values doubled (exact small integers) and take the 1/2 back here, once per 32
// weights, without an ldexp call. e = 0 and 1 give the f32 subnormals 2^-128 and 2^-127
// (exact powers of two still); e = 255 (NaN in the OCP MX spec, never in valid data) gives NaN.
#pragma once

#include <cstdint>
#include <cstring>

namespace waste::quant {

inline float halfE8m0(uint8_t e)
{
    const uint32_t bits = e >= 2 ? (e == 255 ? 0x7fc00000u : uint32_t(e - 1) << 23) : (0x00200000u << e);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

} // namespace waste::quant
