// The container's one half-precision rule, for readers and writers alike.
//
// Exponent 31 is an ordinary exponent: 0x7c00 is 2^16 and 0x7fff is 131008, never
// inf or NaN. That is how the reference engine decodes every f16 it reads
// (kimi-linear-math.md §2.3, `waste_f16`), so a container's meaning is fixed by it;
// the writer uses the same range so that what it quantizes against is exactly what a
// reader will decode. The converter never stores a scale at or above 65520 (it clamps
// to 65504), so the choice changes no byte it writes; it only matters for hand-made
// or foreign containers and for source checkpoints that hold f16 inf/NaN.
//
// Subnormals (exponent 0) are m * 2^-24 everywhere except codebooks, which the
// reference reads with subnormals flushed to signed zero (the *FlushSubnormal pair).
// bfloat16 is the checkpoints' dtype and our optional trunk encoding; it keeps IEEE
// float semantics (it is the top half of an f32).
#pragma once

#include <cstdint>
#include <cstring>

namespace waste::format {

inline uint32_t floatBits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float bitsFloat(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline constexpr uint16_t kF16Max = 0x7fffu; // 131008, the largest magnitude (exponent 31 is ordinary)

inline float f16ToFloat(uint16_t h)
{
    const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu;
    const uint32_t m = h & 0x3ffu;
    if (e == 0) {
        const float v = static_cast<float>(m) * (1.0f / 16777216.0f); // m * 2^-24, exact
        return sign ? -v : v;
    }
    return bitsFloat(sign | ((e + 112u) << 23) | (m << 13)); // rebias 15 -> 127; e = 31 gives 2^16
}

inline float f16ToFloatFlushSubnormal(uint16_t h)
{
    if (((h >> 10) & 0x1fu) == 0)
        return (h & 0x8000u) ? -0.0f : 0.0f;
    return f16ToFloat(h);
}

// f32 -> f16, round to nearest, ties to even, subnormals kept. Magnitudes that round
// past 131008, infinities and NaN saturate to +-131008 (there is no inf to write).
inline uint16_t floatToF16(float f)
{
    const uint32_t x = floatBits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x47fff000u) // >= 131040 (rounds to 2^17), inf or NaN
        return static_cast<uint16_t>(sign | kF16Max);
    if (absx < 0x38800000u) { // below 2^-14: subnormal or zero
        if (absx < 0x33000000u) // < 2^-25 rounds to 0
            return static_cast<uint16_t>(sign);
        const uint32_t exp = absx >> 23;
        const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - exp; // 14..24, counting the implicit bit
        uint32_t h = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u)))
            ++h;
        return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = (absx - 0x38000000u) >> 13; // rebias 127 -> 15; a carry may reach exponent 31
    const uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        ++h;
    return static_cast<uint16_t>(sign | h);
}

// Codebook values: rounded as above, then flushed like the reader flushes them, so the
// converter encodes against exactly the values a reader will use.
inline uint16_t floatToF16FlushSubnormal(float f)
{
    const uint16_t h = floatToF16(f);
    return (h & 0x7c00u) == 0 ? static_cast<uint16_t>(h & 0x8000u) : h;
}

inline float bf16ToFloat(uint16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

// f32 -> bf16, round to nearest even; NaN stays a quiet NaN.
inline uint16_t floatToBf16(float f)
{
    const uint32_t x = floatBits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((x >> 16) | 0x40u);
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

} // namespace waste::format
