#include "text/python_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

namespace waste::text {

std::string pyFloatRepr(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "Infinity" : "-Infinity";
    char buf[64];
    // Shortest round-trip digits, as Python's repr uses.
    const auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
    const std::string sci(buf, res.ptr);
    const size_t e = sci.find('e');
    std::string digits;
    for (size_t i = 0; i < e; ++i)
        if (sci[i] != '.')
            digits += sci[i];
    const int exp10 = std::stoi(sci.substr(e + 1));
    while (digits.size() > 1 && digits.back() == '0')
        digits.pop_back();
    const int decpt = exp10 + 1; // digits d1 d2 ... with the point after `decpt` of them
    const int n = static_cast<int>(digits.size());
    std::string out = std::signbit(v) ? "-" : "";
    if (digits == "0") {
        out += "0.0";
    } else if (decpt <= -4 || decpt > 16) {
        out += digits.substr(0, 1);
        if (n > 1)
            out += "." + digits.substr(1);
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
        out += ebuf;
    } else if (decpt <= 0) {
        out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (decpt >= n) {
        out += digits + std::string(static_cast<size_t>(decpt - n), '0') + ".0";
    } else {
        out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
    return out;
}

namespace {

void appendUnicodeEscape(std::string &out, uint32_t u)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u & 0xFFFF));
    out += buf;
}

void dumpString(std::string &out, const std::string &s, bool ensureAscii)
{
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
        case '"': out += "\\\""; ++i; continue;
        case '\\': out += "\\\\"; ++i; continue;
        case '\n': out += "\\n"; ++i; continue;
        case '\r': out += "\\r"; ++i; continue;
        case '\t': out += "\\t"; ++i; continue;
        case '\b': out += "\\b"; ++i; continue;
        case '\f': out += "\\f"; ++i; continue;
        default: break;
        }
        if (c < 0x20) {
            appendUnicodeEscape(out, c);
            ++i;
            continue;
        }
        if (c < 0x80 || !ensureAscii) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        // Decode one UTF-8 sequence (the input came from a JSON parser: valid).
        uint32_t cp = 0;
        size_t len = 1;
        if ((c & 0xE0) == 0xC0) {
            cp = c & 0x1F;
            len = 2;
        } else if ((c & 0xF0) == 0xE0) {
            cp = c & 0x0F;
            len = 3;
        } else {
            cp = c & 0x07;
            len = 4;
        }
        for (size_t k = 1; k < len && i + k < s.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        i += len;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            appendUnicodeEscape(out, 0xD800 + (cp >> 10));
            appendUnicodeEscape(out, 0xDC00 + (cp & 0x3FF));
        } else {
            appendUnicodeEscape(out, cp);
        }
    }
    out += '"';
}

void dump(std::string &out, const nlohmann::ordered_json &v, const PyJsonStyle &st)
{
    using vt = nlohmann::ordered_json::value_t;
    switch (v.type()) {
    case vt::null:
        out += "null";
        break;
    case vt::boolean:
        out += v.get<bool>() ? "true" : "false";
        break;
    case vt::number_integer:
        out += std::to_string(v.get<int64_t>());
        break;
    case vt::number_unsigned:
        out += std::to_string(v.get<uint64_t>());
        break;
    case vt::number_float:
        out += pyFloatRepr(v.get<double>());
        break;
    case vt::string:
        dumpString(out, v.get_ref<const std::string &>(), st.ensureAscii);
        break;
    case vt::array: {
        out += '[';
        bool first = true;
        for (const auto &x : v) {
            if (!first)
                out += st.itemSeparator;
            first = false;
            dump(out, x, st);
        }
        out += ']';
        break;
    }
    case vt::object: {
        std::vector<const std::string *> keys;
        for (auto it = v.begin(); it != v.end(); ++it)
            keys.push_back(&it.key());
        if (st.sortKeys)
            std::stable_sort(keys.begin(), keys.end(), [](const std::string *a, const std::string *b) { return *a < *b; });
        out += '{';
        bool first = true;
        for (const std::string *k : keys) {
            if (!first)
                out += st.itemSeparator;
            first = false;
            dumpString(out, *k, st.ensureAscii);
            out += st.keySeparator;
            dump(out, v.at(*k), st);
        }
        out += '}';
        break;
    }
    default:
        out += "null";
        break;
    }
}

} // namespace

std::string pyJsonDumps(const nlohmann::ordered_json &value, const PyJsonStyle &style)
{
    std::string out;
    dump(out, value, style);
    return out;
}

} // namespace waste::text
