#include "image/jpeg_guard.hpp"

#include <algorithm>

namespace waste::image {

std::string jpegGuardProblem(std::span<const uint8_t> f)
{
    const size_t n = f.size();
    if (n < 2 || f[0] != 0xFF || f[1] != 0xD8) return {};
    // Follow the marker stream the way stb does, so every Huffman table stb would build is
    // seen here first: bytes that are not a marker (entropy-coded data, junk) are skipped up
    // to the next 0xFF; DHT and DQT are walked table by table, since stb reads them by their
    // contents and not by the segment length.
    size_t pos = 2;
    while (pos < n) {
        if (f[pos] != 0xFF) {
            ++pos;
            continue;
        }
        size_t q = pos + 1;
        while (q < n && f[q] == 0xFF) ++q; // fill bytes
        if (q >= n) return {};
        const uint8_t marker = f[q];
        const size_t body = q + 1;
        if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
            pos = body; // stuffed zero, TEM, restart or SOI: no length
            continue;
        }
        if (marker == 0xD9 || body + 2 > n) return {};
        const long len = long(f[body]) << 8 | long(f[body + 1]);
        if (marker == 0xC4) { // DHT
            long left = len - 2;
            size_t t = body + 2;
            while (left > 0) {
                if (t + 17 > n) return {};
                long codes = 0;
                for (size_t i = 1; i <= 16; ++i) codes += f[t + i];
                if (codes > 256)
                    return "a JPEG Huffman table declares " + std::to_string(codes) + " codes (at most 256)";
                t += size_t(17 + codes);
                left -= 17 + codes;
            }
            pos = t;
            continue;
        }
        if (marker == 0xDB) { // DQT: 8- or 16-bit tables of 64 entries
            long left = len - 2;
            size_t t = body + 2;
            while (left > 0) {
                if (t >= n) return {};
                const long size = 1 + ((f[t] >> 4) ? 128 : 64);
                t += size_t(size);
                left -= size;
            }
            pos = t;
            continue;
        }
        pos = body + size_t(std::max(len, 0L));
    }
    return {};
}

} // namespace waste::image
