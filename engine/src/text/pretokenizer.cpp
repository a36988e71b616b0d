#include "text/pretokenizer.hpp"

namespace waste::text {

CodePoint decodeLenient(std::string_view text, size_t pos)
{
    const auto b = static_cast<unsigned char>(text[pos]);
    const size_t left = text.size() - pos;
    auto cont = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(text[pos + i]) & 0x3F); };
    if (b < 0x80)
        return {b, 1};
    if ((b & 0xE0) == 0xC0 && left >= 2)
        return {(static_cast<uint32_t>(b & 0x1F) << 6) | cont(1), 2};
    if ((b & 0xF0) == 0xE0 && left >= 3)
        return {(static_cast<uint32_t>(b & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3};
    if ((b & 0xF8) == 0xF0 && left >= 4)
        return {(static_cast<uint32_t>(b & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4};
    return {b, 1};
}

bool isHan(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0x20000 && c <= 0x2FA1F);
}

bool isLetter(uint32_t c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
        return true;
    if (isHan(c))
        return false;
    return (c >= 0x00C0 && c <= 0x024F) || (c >= 0x0300 && c <= 0x036F) || (c >= 0x0370 && c <= 0x03FF) ||
           (c >= 0x0400 && c <= 0x052F) || (c >= 0x0590 && c <= 0x06FF) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1E00 && c <= 0x1EFF);
}

bool isDigit(uint32_t c) { return c >= '0' && c <= '9'; }

bool isSpace(uint32_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == 0x00A0;
}

bool isNewline(uint32_t c) { return c == '\r' || c == '\n'; }

namespace {

bool isOther(uint32_t c) { return !isSpace(c) && !isLetter(c) && !isDigit(c); }

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Length of a contraction suffix ('s 't 're 've 'm 'll 'd) starting at `pos`, or 0.
size_t contractionLength(std::string_view t, size_t pos)
{
    if (pos >= t.size() || t[pos] != '\'')
        return 0;
    static constexpr std::string_view kSuffixes[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (std::string_view s : kSuffixes) {
        if (pos + 1 + s.size() > t.size())
            continue;
        bool match = true;
        for (size_t i = 0; i < s.size(); ++i)
            match = match && lower(t[pos + 1 + i]) == s[i];
        if (match)
            return 1 + s.size();
    }
    return 0;
}

// End of the maximal run from `pos` of code points satisfying `pred`.
template <class Pred>
size_t runEnd(std::string_view t, size_t pos, Pred pred)
{
    while (pos < t.size()) {
        const CodePoint c = decodeLenient(t, pos);
        if (!pred(c.cp))
            break;
        pos += c.len;
    }
    return pos;
}

} // namespace

size_t nextPieceLength(std::string_view t)
{
    const CodePoint first = decodeLenient(t, 0);
    const uint32_t c = first.cp;
    const bool hasNext = first.len < t.size();
    const uint32_t next = hasNext ? decodeLenient(t, first.len).cp : 0;

    // 1. a run of Han
    if (isHan(c))
        return runEnd(t, 0, isHan);
    // 2. one leading non-letter (not a digit or newline) glued to a letter run
    if (!isLetter(c) && !isDigit(c) && !isNewline(c) && hasNext && isLetter(next)) {
        const size_t end = runEnd(t, first.len, isLetter);
        return end + contractionLength(t, end);
    }
    // 3. a letter run
    if (isLetter(c)) {
        const size_t end = runEnd(t, 0, isLetter);
        return end + contractionLength(t, end);
    }
    // 4. up to three digits
    if (isDigit(c)) {
        size_t end = 0;
        for (int n = 0; n < 3 && end < t.size() && isDigit(static_cast<unsigned char>(t[end])); ++n)
            ++end;
        return end;
    }
    // 5. punctuation, optionally after one space, with trailing newlines
    {
        const size_t j = (c == ' ' && hasNext && isOther(next)) ? first.len : 0;
        size_t end = runEnd(t, j, isOther);
        if (end > j) {
            while (end < t.size() && (t[end] == '\r' || t[end] == '\n'))
                ++end;
            return end;
        }
    }
    // 6. whitespace
    if (isSpace(c)) {
        size_t end = 0;
        size_t afterLastNewline = 0;
        while (end < t.size()) {
            const CodePoint cp = decodeLenient(t, end);
            if (!isSpace(cp.cp))
                break;
            end += cp.len;
            if (isNewline(cp.cp))
                afterLastNewline = end;
        }
        if (afterLastNewline > 0)
            return afterLastNewline;
        if (end < t.size() && end > 1)
            return end - 1; // leave the last byte to lead the next piece
        return end;
    }
    // 7. anything else: one code point
    return first.len;
}

std::vector<std::string_view> pretokenize(std::string_view text)
{
    std::vector<std::string_view> pieces;
    while (!text.empty()) {
        const size_t n = nextPieceLength(text);
        pieces.push_back(text.substr(0, n));
        text.remove_prefix(n);
    }
    return pieces;
}

} // namespace waste::text
