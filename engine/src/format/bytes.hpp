// Little-endian loads and stores of the container's fixed-width fields. Every
// header and index in a WASTE v0 container is little-endian whatever the host.
#pragma once

#include <cstdint>
#include <cstring>

namespace waste::format {

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

inline void storeU8(uint8_t *p, uint8_t v) { p[0] = v; }
inline void storeU16(uint8_t *p, uint16_t v)
{
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}
inline void storeU32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}

} // namespace waste::format
