#include "text/unicode_props.hpp"

#include <algorithm>
#include <unordered_map>

namespace waste::text::unicode {

namespace {

template <class Range>
const Range &rangeFor(const Range *table, size_t count, uint32_t cp)
{
    // The last range whose start is <= cp (the first range starts at 0).
    const Range *end = table + count;
    const Range *it = std::upper_bound(table, end, cp, [](uint32_t v, const Range &r) { return v < r.start; });
    return *(it - 1);
}

uint8_t combiningClass(uint32_t cp)
{
    if (cp < 0x300 || cp == kInvalid)
        return 0;
    return rangeFor(kCombiningRanges, kCombiningRangesCount, cp).ccc;
}

// Hangul syllables decompose and compose by arithmetic (Unicode §3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(uint32_t cp, std::vector<uint32_t> &out)
{
    if (cp >= kSBase && cp < kSBase + kSCount) {
        const uint32_t s = cp - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount)
            out.push_back(kTBase + s % kTCount);
        return;
    }
    const Decomposition *end = kCanonicalDecompositions + kCanonicalDecompositionsCount;
    const Decomposition *it = std::lower_bound(kCanonicalDecompositions, end, cp,
                                               [](const Decomposition &d, uint32_t v) { return d.cp < v; });
    if (cp < 0xC0 || cp == kInvalid || it == end || it->cp != cp) {
        out.push_back(cp);
        return;
    }
    decompose(it->first, out);
    if (it->second)
        decompose(it->second, out);
}

const std::unordered_map<uint64_t, uint32_t> &compositions()
{
    static const std::unordered_map<uint64_t, uint32_t> map = [] {
        std::unordered_map<uint64_t, uint32_t> m;
        const uint32_t *exBegin = kCompositionExclusions, *exEnd = exBegin + kCompositionExclusionsCount;
        for (size_t i = 0; i < kCanonicalDecompositionsCount; ++i) {
            const Decomposition &d = kCanonicalDecompositions[i];
            if (d.second && !std::binary_search(exBegin, exEnd, d.cp))
                m.emplace((uint64_t(d.first) << 32) | d.second, d.cp);
        }
        return m;
    }();
    return map;
}

uint32_t compose(uint32_t a, uint32_t b)
{
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
        return a + (b - kTBase);
    const auto &m = compositions();
    const auto it = m.find((uint64_t(a) << 32) | b);
    return it == m.end() ? 0 : it->second;
}

} // namespace

Category category(uint32_t cp)
{
    if (cp >= 0x110000)
        return Cn;
    return static_cast<Category>(rangeFor(kCategoryRanges, kCategoryRangesCount, cp).category);
}

bool isHanScript(uint32_t cp)
{
    const CodeRange *end = kHanRanges + kHanRangesCount;
    const CodeRange *it = std::upper_bound(kHanRanges, end, cp, [](uint32_t v, const CodeRange &r) { return v < r.first; });
    return it != kHanRanges && cp <= (it - 1)->last;
}

bool isWhiteSpace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

Decoded decodeUtf8(std::string_view t)
{
    Decoded d;
    d.cps.reserve(t.size());
    d.offsets.reserve(t.size() + 1);
    size_t i = 0;
    while (i < t.size()) {
        const auto b = static_cast<unsigned char>(t[i]);
        size_t len = b < 0x80 ? 1 : (b >= 0xC2 && b <= 0xDF) ? 2 : (b >= 0xE0 && b <= 0xEF) ? 3 : (b >= 0xF0 && b <= 0xF4) ? 4 : 0;
        uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
        bool ok = len > 0 && i + len <= t.size();
        for (size_t k = 1; ok && k < len; ++k) {
            const auto c = static_cast<unsigned char>(t[i + k]);
            ok = (c & 0xC0) == 0x80;
            cp = (cp << 6) | (c & 0x3F);
        }
        // Overlong forms, surrogates and values past U+10FFFF are invalid too.
        if (ok && ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
            ok = false;
        d.offsets.push_back(i);
        if (ok) {
            d.cps.push_back(cp);
            i += len;
        } else {
            d.cps.push_back(kInvalid);
            i += 1;
        }
    }
    d.offsets.push_back(t.size());
    return d;
}

void appendUtf8(uint32_t cp, std::string &out)
{
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x110000) {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

std::string nfc(std::string_view text)
{
    // Text below U+0300 has no decompositions that could change it.
    if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0xCC; }))
        return std::string(text);
    const Decoded d = decodeUtf8(text);
    std::vector<uint32_t> cps;
    std::vector<size_t> src; // for kInvalid: the byte it stands for
    cps.reserve(d.cps.size());
    for (size_t i = 0; i < d.cps.size(); ++i) {
        const size_t before = cps.size();
        decompose(d.cps[i], cps);
        src.resize(cps.size(), d.offsets[i]);
        (void)before;
    }
    // Canonical ordering: marks between starters sorted stably by combining class.
    for (size_t i = 0; i < cps.size();) {
        if (combiningClass(cps[i]) == 0) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < cps.size() && combiningClass(cps[j]) != 0)
            ++j;
        std::vector<std::pair<uint32_t, size_t>> run;
        for (size_t k = i; k < j; ++k)
            run.emplace_back(cps[k], src[k]);
        std::stable_sort(run.begin(), run.end(),
                         [](const auto &a, const auto &b) { return combiningClass(a.first) < combiningClass(b.first); });
        for (size_t k = i; k < j; ++k)
            std::tie(cps[k], src[k]) = run[k - i];
        i = j;
    }
    // Canonical composition.
    std::vector<uint32_t> out;
    std::vector<size_t> outSrc;
    long starter = -1;
    int lastCcc = -1;
    for (size_t i = 0; i < cps.size(); ++i) {
        const uint32_t c = cps[i];
        const int ccc = combiningClass(c);
        if (starter >= 0 && c != kInvalid) {
            const bool blocked = lastCcc != -1 && (lastCcc == 0 || lastCcc >= ccc);
            if (!blocked) {
                if (const uint32_t comp = compose(out[size_t(starter)], c)) {
                    out[size_t(starter)] = comp;
                    continue;
                }
            }
        }
        if (ccc == 0) {
            starter = c == kInvalid ? -1 : static_cast<long>(out.size());
            lastCcc = -1;
        } else {
            lastCcc = ccc;
        }
        out.push_back(c);
        outSrc.push_back(src[i]);
    }
    std::string result;
    result.reserve(text.size());
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == kInvalid)
            result.push_back(text[outSrc[i]]);
        else
            appendUtf8(out[i], result);
    }
    return result;
}

} // namespace waste::text::unicode
