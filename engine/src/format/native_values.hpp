// The element encodings of native expert records (native_record.hpp), decoded exactly
// to f32: every value these formats can hold is representable in f32.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace waste::format {

// E2M1 (FP4): bit 3 sign, bits 2..1 exponent, bit 0 mantissa.
inline float e2m1Value(uint8_t code)
{
    static constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    const float m = kMagnitude[code & 7];
    return (code & 8) ? -m : m;
}

// The sixteen E2M1 values as IEEE halves, whose low bytes are all 0: their high bytes, by
// code (-0 at 8). A byte shuffle by code and the half -> float conversion give e2m1Value
// exactly (the AVX2 matvec rows and panel rows).
inline constexpr uint8_t kE2m1HalfHighBytes[16] = {0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46,
                                                   0x80, 0xB8, 0xBC, 0xBE, 0xC0, 0xC2, 0xC4, 0xC6};

// E8M0 shared scale: 2^(e-127), built from its bits so the SIMD kernels can call it once per
// 32 weights without an ldexp call. e = 0 is the f32 subnormal 2^-127; e = 255 is NaN in the
// OCP MX spec (never in valid data).
inline float e8m0Scale(uint8_t e)
{
    const uint32_t bits = e == 0 ? 0x00400000u : e == 255 ? 0x7fc00000u : uint32_t(e) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// FP8 E4M3 (the "fn" variant: no infinities, S.1111.111 is NaN), exponent bias 7.
inline float e4m3Value(uint8_t b)
{
    const int exp = (b >> 3) & 15, man = b & 7;
    float v;
    if (exp == 15 && man == 7)
        v = std::nanf("");
    else if (exp == 0)
        v = std::ldexp(float(man), -9); // subnormal: man/8 * 2^-6
    else
        v = std::ldexp(float(8 + man), exp - 10); // (1 + man/8) * 2^(exp-7)
    return (b & 0x80) ? -v : v;
}

// e4m3Value for every byte, computed once (one table for the whole program: an inline
// function's static): decoding with an ldexp per weight made the FP8 kernels about 30 times
// slower than the others.
inline const std::array<float, 256> &e4m3Table()
{
    static const std::array<float, 256> t = [] {
        std::array<float, 256> v{};
        for (int b = 0; b < 256; ++b)
            v[size_t(b)] = e4m3Value(uint8_t(b));
        return v;
    }();
    return t;
}

// bfloat16 from its two little-endian bytes.
inline float bf16Value(const uint8_t *p)
{
    const uint32_t bits = (uint32_t(p[0]) | (uint32_t(p[1]) << 8)) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

} // namespace waste::format
