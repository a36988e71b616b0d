// crc32 by slice-by-8 tables: eight table look-ups per 8 bytes. The fallback on every CPU,
// and the tails of the faster ways.
#include "format/crc32.hpp"
#include "format/crc32_ways.hpp"

#include <array>

namespace waste::format {
namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables makeTables()
{
    Tables t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1u) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (int s = 1; s < 8; ++s)
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xffu];
    return t;
}

const Tables &tables()
{
    static const Tables t = makeTables();
    return t;
}

uint32_t scalarCrc(const void *bytes, size_t size, uint32_t crc)
{
    return ~detail::crc32TableUpdate(~crc, static_cast<const uint8_t *>(bytes), size);
}

} // namespace

namespace detail {

uint32_t crc32TableUpdate(uint32_t c, const uint8_t *data, size_t size)
{
    const Tables &t = tables();
    while (size >= 8) {
        const uint32_t lo = c ^ (static_cast<uint32_t>(data[0]) | (static_cast<uint32_t>(data[1]) << 8) |
                                 (static_cast<uint32_t>(data[2]) << 16) | (static_cast<uint32_t>(data[3]) << 24));
        c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
            t[3][data[4]] ^ t[2][data[5]] ^ t[1][data[6]] ^ t[0][data[7]];
        data += 8;
        size -= 8;
    }
    while (size--)
        c = t[0][(c ^ *data++) & 0xffu] ^ (c >> 8);
    return c;
}

} // namespace detail

Crc32Fn crc32Scalar() { return &scalarCrc; }

} // namespace waste::format
