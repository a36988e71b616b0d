// An e8m0 scale, 2^(e-127), straight from its bits, for the SIMD MXFP4 kernels: once per 32
// weights, without the ldexp call of format::e8m0Scale, and the same value (e = 0 is the f32
// subnormal 2^-127; e = 255, NaN in the OCP MX spec and never in valid data, gives NaN).
#pragma once

#include <cstdint>
#include <cstring>

namespace waste::quant {

inline float e8m0Value(uint8_t e)
{
    const uint32_t bits = e == 0 ? 0x00400000u : e == 255 ? 0x7fc00000u : uint32_t(e) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

} // namespace waste::quant
