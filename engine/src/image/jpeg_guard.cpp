#include "image/jpeg_guard.hpp"

#include <algorithm>

namespace waste::image {

std::string jpegGuardProblem(std::span<const uint8_t> f)
{
    if (f.size() < 2 || f[0] != 0xFF || f[1] != 0xD8) return {};
    // Walk every marker segment, including those between progressive scans: entropy-coded
    // data is skipped up to the next 0xFF that is not a stuffed zero or a restart marker.
    size_t pos = 2;
    while (pos + 1 < f.size()) {
        if (f[pos] != 0xFF) {
            ++pos;
            continue;
        }
        const uint8_t marker = f[pos + 1];
        if (marker == 0xFF) {
            ++pos;
            continue;
        }
        if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
            pos += 2;
            continue;
        }
        if (marker == 0xD9) return {};
        if (pos + 4 > f.size()) return {};
        const size_t len = size_t(f[pos + 2]) << 8 | f[pos + 3];
        const size_t end = std::min(f.size(), pos + 2 + len);
        if (marker == 0xC4) { // DHT: one or more tables of (class/id, 16 counts, symbols)
            size_t t = pos + 4;
            while (t < end) {
                if (t + 17 > end) break;
                size_t n = 0;
                for (size_t i = 0; i < 16; ++i) n += f[t + 1 + i];
                if (n > 256) return "a JPEG Huffman table declares " + std::to_string(n) + " codes (at most 256)";
                t += 17 + n;
            }
        }
        pos = pos + 2 + len;
    }
    return {};
}

} // namespace waste::image
