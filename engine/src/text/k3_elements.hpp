// K3's XTML elements as segments: the one place that writes a tag's header and footer
// and escapes attribute values. The renderer writes whole requests with K3Writer; the
// constrained decoders reach the same headers through k3OpenSegments (k3_template.hpp).
#pragma once

#include "text/chat_segments.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waste::text {

using K3Attrs = std::vector<std::pair<std::string, std::string>>;

// An attribute value as the encoder writes it: '&' becomes "&amp;" first, then '"'
// becomes "&quot;"; nothing else changes ('<' and '>' stay, the markup's brackets are tokens).
std::string k3EscapeAttribute(std::string_view value);
// The inverse, for attribute values the model writes: "&quot;" and "&amp;" read back as
// '"' and '&' in one left-to-right pass (so "&amp;quot;" is the text "&quot;").
std::string k3UnescapeAttribute(std::string_view value);

// Appends elements and text to a segment list. Empty text adds no segment.
class K3Writer {
public:
    void markup(const std::string &special);
    void text(const std::string &s);
    void open(const std::string &tag, const K3Attrs &attrs = {});
    void close(const std::string &tag);
    // The message's footer and <|end_of_msg|>.
    void endMessage();
    Segments take() { return std::move(m_out); }

private:
    void append(const Segments &s) { m_out.insert(m_out.end(), s.begin(), s.end()); }
    Segments m_out;
};

} // namespace waste::text
