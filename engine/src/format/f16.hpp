// Half-precision decoding exactly as WASTE v0 containers are meant to be read.
// Two rules exist: trunk scales and expert row scales keep subnormals, codebooks
// flush them to signed zero. Exponent 31 is an ordinary exponent in both (no inf/NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace waste::format {

inline float f16ToFloat(uint16_t h)
{
    const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    if (e == 0)
        return sign * std::ldexp(static_cast<float>(m), -24);
    return sign * std::ldexp(1.0f + static_cast<float>(m) / 1024.0f, e - 15);
}

inline float f16ToFloatFlushSubnormal(uint16_t h)
{
    const int e = (h >> 10) & 0x1f;
    if (e == 0)
        return (h & 0x8000u) ? -0.0f : 0.0f;
    return f16ToFloat(h);
}

inline float bf16ToFloat(uint16_t h)
{
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline uint16_t loadU16(const uint8_t *p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t loadU32(const uint8_t *p)
{
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline float loadF32(const uint8_t *p)
{
    const uint32_t bits = loadU32(p);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

} // namespace waste::format
