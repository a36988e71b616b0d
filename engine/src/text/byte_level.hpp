// The byte-level alphabet of GPT-2-style BPE vocabularies (Hugging Face tokenizer.json
// with a ByteLevel pre-tokenizer): every byte is written as one printable code point, so
// a vocabulary of byte strings can be JSON text. Printable Latin-1 bytes stand for
// themselves; the other 68 bytes map to U+0100 upwards in byte order.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace waste::text {

// The code point that stands for byte `b`.
uint32_t byteLevelCodePoint(unsigned char b);
// UTF-8 of the byte-level spelling of `bytes`.
std::string toByteLevel(std::string_view bytes);
// The bytes a byte-level spelling stands for; nullopt when it holds a code point outside
// the alphabet.
std::optional<std::string> fromByteLevel(std::string_view spelling);

} // namespace waste::text
