// A rendered chat prompt: a list of segments, each either markup (written by the
// template; specials inside it become special tokens) or text (written by a user, a
// document or a tool; always tokenized as ordinary text, so it can never forge
// markup). Segments are tokenized one by one and never joined: BPE is not
// associative, and joining would let text merge with markup.
#pragma once

#include "waste/chat.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace waste::text {

class Tokenizer;

using Segment = waste::ChatSegment; // declared in waste/chat.hpp
using Segments = waste::ChatSegments;

std::vector<int32_t> encodeSegments(const Tokenizer &tok, const Segments &segments);

} // namespace waste::text
