#include "text/byte_level.hpp"

#include "text/unicode_props.hpp"

#include <array>

namespace waste::text {

namespace {

bool standsForItself(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

const std::array<uint32_t, 256> &table()
{
    static const std::array<uint32_t, 256> t = [] {
        std::array<uint32_t, 256> m{};
        uint32_t next = 0x100;
        for (unsigned b = 0; b < 256; ++b)
            m[b] = standsForItself(b) ? b : next++;
        return m;
    }();
    return t;
}

} // namespace

uint32_t byteLevelCodePoint(unsigned char b) { return table()[b]; }

std::string toByteLevel(std::string_view bytes)
{
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes)
        unicode::appendUtf8(table()[static_cast<unsigned char>(c)], out);
    return out;
}

std::optional<std::string> fromByteLevel(std::string_view spelling)
{
    std::string out;
    for (uint32_t cp : unicode::decodeUtf8(spelling).cps) {
        if (cp < 0x100 && standsForItself(cp))
            out.push_back(static_cast<char>(cp));
        else if (cp >= 0x100 && cp < 0x100 + 68) {
            // The n-th byte that does not stand for itself.
            unsigned n = cp - 0x100, b = 0;
            for (;; ++b)
                if (!standsForItself(b) && n-- == 0)
                    break;
            out.push_back(static_cast<char>(b));
        } else {
            return std::nullopt;
        }
    }
    return out;
}

} // namespace waste::text
