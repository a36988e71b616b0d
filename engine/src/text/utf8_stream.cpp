#include "text/utf8_stream.hpp"

namespace waste::text {

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
}

int utf8SequenceLength(std::string_view s)
{
    if (s.empty())
        return 0;
    const auto b0 = static_cast<unsigned char>(s[0]);
    if (b0 < 0x80)
        return 1;
    int need;
    unsigned char lo = 0x80, hi = 0xBF; // allowed range of the second byte (RFC 3629)
    if (b0 >= 0xC2 && b0 <= 0xDF)
        need = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 3;
        if (b0 == 0xE0)
            lo = 0xA0;
        else if (b0 == 0xED)
            hi = 0x9F; // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 4;
        if (b0 == 0xF0)
            lo = 0x90;
        else if (b0 == 0xF4)
            hi = 0x8F;
    } else
        return -1;
    for (int i = 1; i < need; ++i) {
        if (static_cast<size_t>(i) >= s.size())
            return 0;
        const auto b = static_cast<unsigned char>(s[static_cast<size_t>(i)]);
        const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (b < l || b > h)
            return -1;
    }
    return need;
}

std::string Utf8StreamDecoder::push(std::string_view bytes)
{
    m_held.append(bytes);
    std::string out;
    size_t pos = 0;
    while (pos < m_held.size()) {
        const int n = utf8SequenceLength(std::string_view(m_held).substr(pos));
        if (n == 0)
            break; // wait for more bytes
        if (n < 0) {
            out += kReplacement;
            ++pos;
        } else {
            out.append(m_held, pos, static_cast<size_t>(n));
            pos += static_cast<size_t>(n);
        }
    }
    m_held.erase(0, pos);
    return out;
}

std::string Utf8StreamDecoder::flush()
{
    std::string out = m_held.empty() ? std::string() : std::string(kReplacement);
    m_held.clear();
    return out;
}

} // namespace waste::text

std::string waste::sanitizeUtf8(std::string_view s)
{
    text::Utf8StreamDecoder d;
    std::string out = d.push(s);
    return out + d.flush();
}
