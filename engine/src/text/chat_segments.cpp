#include "text/chat_segments.hpp"

#include "text/tokenizer.hpp"

namespace waste::text {

std::vector<int32_t> encodeSegments(const Tokenizer &tok, const Segments &segments)
{
    std::vector<int32_t> ids;
    for (const Segment &s : segments)
        tok.encodeTo(s.text, s.markup, ids);
    return ids;
}

} // namespace waste::text
