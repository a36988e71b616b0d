// A rendered chat prompt: a list of segments, each either markup (written by the
// template; specials inside it become special tokens) or text (written by a user, a
// document or a tool; always tokenized as ordinary text, so it can never forge
// markup). Segments are tokenized one by one and never joined: BPE is not
// associative, and joining would let text merge with markup.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste::text {

class Tokenizer;

struct Segment {
    std::string text;
    bool markup = false;
    bool operator==(const Segment &) const = default;
};
using Segments = std::vector<Segment>;

std::vector<int32_t> encodeSegments(const Tokenizer &tok, const Segments &segments);

} // namespace waste::text
