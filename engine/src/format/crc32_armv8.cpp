// crc32 by the ARMv8 CRC32 instructions (crc32x: 8 bytes per instruction, zlib's
// polynomial, no inversion), where the CPU has them (an optional extension before
// ARMv8.1, so asked of the kernel at run time).
#include "format/crc32.hpp"
#include "format/crc32_ways.hpp"

#if defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <cstring>
#include <sys/auxv.h>

#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

namespace waste::format {
namespace {

__attribute__((target("+crc"))) uint32_t armv8Crc(const void *bytes, size_t size, uint32_t crc)
{
    const auto *p = static_cast<const uint8_t *>(bytes);
    uint32_t reg = ~crc;
    while (size >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8); // aarch64 Linux is little-endian, as the CRC reads bytes
        reg = __crc32d(reg, v);
        p += 8;
        size -= 8;
    }
    while (size--)
        reg = __crc32b(reg, *p++);
    return ~reg;
}

} // namespace

Crc32Fn crc32Armv8() { return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? &armv8Crc : nullptr; }

} // namespace waste::format

#else

namespace waste::format {
Crc32Fn crc32Armv8() { return nullptr; }
} // namespace waste::format

#endif
