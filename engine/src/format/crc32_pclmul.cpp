// crc32 by carry-less multiplication (x86-64 PCLMULQDQ): the data is folded 64 bytes at a
// time into four 128-bit remainders, which keep the message's value modulo the CRC
// polynomial; they are then folded into one, and that one's 16 bytes and the tail go through
// the tables. The fold constants are x^k mod P for the fold distances (bit-reflected), as in
// Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ" (2009).
#include "format/crc32.hpp"
#include "format/crc32_ways.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

namespace waste::format {
namespace {

#define WASTE_CRC_TARGET __attribute__((target("pclmul,sse4.1")))

// x^(4*128+32) and x^(4*128-32) mod P (folding across 64 bytes), low then high half's factor.
constexpr long long kFold64Lo = 0x154442bd4, kFold64Hi = 0x1c6e41596;
// x^(128+32) and x^(128-32) mod P (folding across 16 bytes).
constexpr long long kFold16Lo = 0x1751997d0, kFold16Hi = 0x0ccaa009e;

WASTE_CRC_TARGET inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

WASTE_CRC_TARGET inline __m128i load(const uint8_t *p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); }

WASTE_CRC_TARGET uint32_t pclmulCrc(const void *bytes, size_t size, uint32_t crc)
{
    const auto *p = static_cast<const uint8_t *>(bytes);
    uint32_t reg = ~crc;
    if (size < 64)
        return ~detail::crc32TableUpdate(reg, p, size);
    // The register enters as the first four bytes' xor (what the table update does first).
    __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(reg)));
    __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
    p += 64;
    size -= 64;
    const __m128i k64 = _mm_set_epi64x(kFold64Hi, kFold64Lo);
    while (size >= 64) {
        x0 = fold(x0, k64, load(p));
        x1 = fold(x1, k64, load(p + 16));
        x2 = fold(x2, k64, load(p + 32));
        x3 = fold(x3, k64, load(p + 48));
        p += 64;
        size -= 64;
    }
    const __m128i k16 = _mm_set_epi64x(kFold16Hi, kFold16Lo);
    x0 = fold(x0, k16, x1);
    x0 = fold(x0, k16, x2);
    x0 = fold(x0, k16, x3);
    while (size >= 16) {
        x0 = fold(x0, k16, load(p));
        p += 16;
        size -= 16;
    }
    // What is left is a 16-byte message with the same remainder: the tables finish it.
    alignas(16) uint8_t rest[16];
    _mm_store_si128(reinterpret_cast<__m128i *>(rest), x0);
    reg = detail::crc32TableUpdate(0, rest, sizeof rest);
    return ~detail::crc32TableUpdate(reg, p, size);
}

} // namespace

Crc32Fn crc32Pclmul()
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") ? &pclmulCrc : nullptr;
}

} // namespace waste::format

#else

namespace waste::format {
Crc32Fn crc32Pclmul() { return nullptr; }
} // namespace waste::format

#endif
