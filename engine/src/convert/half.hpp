// 16-bit float conversions used by the converter: IEEE binary16 (scales, codebooks)
// and bfloat16 (the usual dtype of released checkpoints).
#pragma once

#include <cstdint>
#include <cstring>

namespace waste::convert {

inline uint32_t floatBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bitsFloat(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// f32 -> f16, round to nearest even; subnormals kept; overflow gives inf.
inline uint16_t floatToHalf(float f) {
    const uint32_t x = floatBits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) // inf or nan
        return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) // rounds to >= 65520: overflow
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (absx < 0x38800000u) { // below the smallest normal half (2^-14): subnormal or zero
        if (absx < 0x33000000u) return static_cast<uint16_t>(sign); // < 2^-25 rounds to 0
        const uint32_t exp = absx >> 23;
        const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - exp; // 14..24 after accounting for the implicit bit
        uint32_t h = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u))) ++h;
        return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = ((absx - 0x38000000u) >> 13); // rebias exponent 127 -> 15
    const uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
}

// f16 -> f32 with IEEE semantics (subnormals honoured, e=31 is inf/nan).
inline float halfToFloat(uint16_t h) {
    const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = static_cast<float>(mant) * (1.0f / 16777216.0f); // m * 2^-24
        return sign ? -v : v;
    }
    if (exp == 31) return bitsFloat(sign | 0x7f800000u | (mant << 13));
    return bitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Codebook values are decoded by the reference engine with subnormals flushed to
// zero, so the converter rounds its centroids the same way before encoding with them.
inline uint16_t floatToHalfFlushSubnormal(float f) {
    const uint16_t h = floatToHalf(f);
    return ((h & 0x7c00u) == 0) ? static_cast<uint16_t>(h & 0x8000u) : h;
}

inline float bf16ToFloat(uint16_t b) { return bitsFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t floatToBf16(float f) {
    const uint32_t x = floatBits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet nan
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

} // namespace waste::convert
