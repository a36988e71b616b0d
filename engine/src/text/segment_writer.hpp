// Appends prompt segments: markup (template text, specials become special tokens) and
// text (what a person, a document or a tool wrote). Empty pieces add nothing; adjacent
// markup joins into one segment (the template wrote it as one string).
#pragma once

#include "text/chat_segments.hpp"

#include <string>

namespace waste::text {

class SegmentWriter {
public:
    void markup(const std::string &s)
    {
        if (s.empty())
            return;
        if (!m_out.empty() && m_out.back().markup)
            m_out.back().text += s;
        else
            m_out.push_back({s, true});
    }
    void text(const std::string &s)
    {
        if (!s.empty())
            m_out.push_back({s, false});
    }
    Segments take() { return std::move(m_out); }

private:
    Segments m_out;
};

} // namespace waste::text
