// Pre-tokenization: splits text into the pieces that BPE encodes one by one.
//
// This reproduces the reference engine's hand-coded approximation of the Kimi
// tokenizer's split pattern (kimi-linear-math.md §4.3), not the regex itself, so
// that ids match the reference on every input, divergences included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace waste::text {

// One lenient UTF-8 step: a lead byte with enough bytes left in `text` takes 2/3/4
// bytes (continuation bytes are not validated); anything else is one byte whose
// code point equals the byte value.
struct CodePoint {
    uint32_t cp = 0;
    size_t len = 0;
};
CodePoint decodeLenient(std::string_view text, size_t pos);

// The character classes the split rules use (the reference's, not Unicode's).
bool isHan(uint32_t cp);
bool isLetter(uint32_t cp);   // excludes Han
bool isDigit(uint32_t cp);    // ASCII only
bool isSpace(uint32_t cp);    // space, \t \n \v \f \r, U+00A0
bool isNewline(uint32_t cp);  // \r, \n

// Byte length of the piece starting at the beginning of `text`. `text` ends at
// the limit: no piece extends past it. Requires a non-empty text.
size_t nextPieceLength(std::string_view text);

// All pieces of `text`, as consecutive views into it.
std::vector<std::string_view> pretokenize(std::string_view text);

} // namespace waste::text
