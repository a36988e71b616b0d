// Turns a stream of token byte strings into text that is safe to show or send:
// a UTF-8 sequence split across tokens is held back until it completes, and bytes
// that can never form valid UTF-8 become U+FFFD, so every chunk is valid UTF-8.
#pragma once

#include "waste/chat.hpp"

#include <string>
#include <string_view>

namespace waste::text {

class Utf8StreamDecoder {
public:
    // Adds bytes; returns the text that is now complete (possibly empty).
    std::string push(std::string_view bytes);
    // Ends the stream: returns whatever was held back (as U+FFFD if incomplete).
    std::string flush();
    bool pending() const { return !m_held.empty(); }

private:
    std::string m_held; // an incomplete but so-far-valid sequence at the end
};

// Number of bytes of a valid UTF-8 sequence at the start of `s`: > 0 when complete,
// 0 when `s` is a valid but incomplete prefix, -1 when the first byte(s) are invalid.
int utf8SequenceLength(std::string_view s);

// `s` with every invalid byte sequence replaced by U+FFFD (declared in waste/chat.hpp).
using waste::sanitizeUtf8;

} // namespace waste::text
