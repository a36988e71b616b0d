#include "image/exif_orientation.hpp"

#include <cstddef>

namespace waste::image {
namespace {

// A bounds-checked reader over the TIFF structure inside the EXIF block.
struct Tiff {
    std::span<const uint8_t> d;
    bool little = true;

    bool u16(size_t at, uint32_t &v) const
    {
        if (at > d.size() || d.size() - at < 2) return false;
        v = little ? uint32_t(d[at]) | uint32_t(d[at + 1]) << 8 : uint32_t(d[at]) << 8 | uint32_t(d[at + 1]);
        return true;
    }
    bool u32(size_t at, uint32_t &v) const
    {
        uint32_t a = 0, b = 0;
        if (!u16(at, a) || !u16(at + 2, b)) return false;
        v = little ? (a | b << 16) : (a << 16 | b);
        return true;
    }
};

int orientationFromExif(std::span<const uint8_t> exif)
{
    // "Exif\0\0" then a TIFF header: byte order, 42, offset of IFD0 (from the TIFF start).
    static constexpr uint8_t kTag[6] = {'E', 'x', 'i', 'f', 0, 0};
    if (exif.size() < 6 + 8) return 1;
    for (int i = 0; i < 6; ++i)
        if (exif[size_t(i)] != kTag[i]) return 1;
    Tiff t{exif.subspan(6)};
    if (t.d[0] == 'I' && t.d[1] == 'I') t.little = true;
    else if (t.d[0] == 'M' && t.d[1] == 'M') t.little = false;
    else return 1;
    uint32_t magic = 0, ifd = 0, count = 0;
    if (!t.u16(2, magic) || magic != 42 || !t.u32(4, ifd) || !t.u16(ifd, count)) return 1;
    for (uint32_t e = 0; e < count; ++e) {
        const size_t at = size_t(ifd) + 2 + size_t(e) * 12;
        uint32_t tag = 0, type = 0, n = 0, value = 0;
        if (!t.u16(at, tag) || !t.u16(at + 2, type) || !t.u32(at + 4, n)) return 1;
        if (tag != 0x0112) continue;
        // SHORT (type 3), one value, stored left-justified in the 4-byte value field.
        if (type != 3 || n != 1 || !t.u16(at + 8, value)) return 1;
        return value >= 1 && value <= 8 ? int(value) : 1;
    }
    return 1;
}

} // namespace

int jpegExifOrientation(std::span<const uint8_t> f)
{
    if (f.size() < 4 || f[0] != 0xFF || f[1] != 0xD8) return 1;
    size_t pos = 2;
    while (pos + 4 <= f.size()) {
        if (f[pos] != 0xFF) return 1;
        uint8_t marker = f[pos + 1];
        if (marker == 0xFF) { // fill byte before a marker
            ++pos;
            continue;
        }
        if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) { // no length
            pos += 2;
            continue;
        }
        if (marker == 0xDA || marker == 0xD9) return 1; // scan data or end: no metadata after this
        const size_t len = size_t(f[pos + 2]) << 8 | size_t(f[pos + 3]);
        if (len < 2 || pos + 2 + len > f.size()) return 1;
        if (marker == 0xE1) {
            const int o = orientationFromExif(f.subspan(pos + 4, len - 2));
            if (o != 1) return o;
        }
        pos += 2 + len;
    }
    return 1;
}

void applyOrientation(std::vector<uint8_t> &rgb, int &width, int &height, int o)
{
    if (o < 2 || o > 8) return;
    const size_t w = size_t(width), h = size_t(height);
    const bool swap = o >= 5;
    const size_t ow = swap ? h : w, oh = swap ? w : h;
    std::vector<uint8_t> out(rgb.size());
    // For every output pixel (x, y), the stored pixel it shows (EXIF 2.3, tag 0x0112).
    for (size_t y = 0; y < oh; ++y) {
        for (size_t x = 0; x < ow; ++x) {
            size_t sx = x, sy = y;
            switch (o) {
            case 2: sx = w - 1 - x; sy = y; break;             // mirrored left-right
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;     // rotated 180
            case 4: sx = x; sy = h - 1 - y; break;             // mirrored top-bottom
            case 5: sx = y; sy = x; break;                     // transposed
            case 6: sx = y; sy = h - 1 - x; break;             // shown rotated 90 clockwise
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;     // transversed
            case 8: sx = w - 1 - y; sy = x; break;             // shown rotated 90 counter-clockwise
            }
            const uint8_t *s = &rgb[(sy * w + sx) * 3];
            uint8_t *d = &out[(y * ow + x) * 3];
            d[0] = s[0];
            d[1] = s[1];
            d[2] = s[2];
        }
    }
    rgb.swap(out);
    width = int(ow);
    height = int(oh);
}

} // namespace waste::image
