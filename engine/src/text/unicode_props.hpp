// Unicode character facts for the split patterns of Hugging Face and tiktoken tokenizers
// (general category, Han script, White_Space) and NFC normalization, which Qwen's
// tokenizer.json applies before splitting. The data is Unicode 14 (unicode_tables.cpp).
#pragma once

#include "text/unicode_tables.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text::unicode {

Category category(uint32_t cp);
bool isHanScript(uint32_t cp);
// The White_Space property: what \s matches in the tokenizers' regex engines.
bool isWhiteSpace(uint32_t cp);

// UTF-8 <-> code points. Invalid bytes decode to kInvalid (and encode back to nothing),
// so a split never joins them with their neighbours.
inline constexpr uint32_t kInvalid = 0xFFFFFFFF;
struct Decoded {
    std::vector<uint32_t> cps;
    std::vector<size_t> offsets; // byte offset of each code point, plus the text's size at the end
};
Decoded decodeUtf8(std::string_view text);
void appendUtf8(uint32_t cp, std::string &out);

// Canonical composition (NFC) of UTF-8 text; invalid bytes pass through unchanged.
std::string nfc(std::string_view text);

} // namespace waste::text::unicode
