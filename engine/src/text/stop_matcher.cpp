#include "text/stop_matcher.hpp"

#include <algorithm>

namespace waste::text {

StopMatcher::StopMatcher(std::vector<std::string> stops)
{
    for (std::string &s : stops)
        if (!s.empty())
            m_stops.push_back(std::move(s));
}

StopMatcher::Result StopMatcher::push(std::string_view bytes)
{
    Result r;
    if (m_stopped)
        return r;
    m_tail.append(bytes);
    if (m_stops.empty()) {
        r.text.swap(m_tail);
        return r;
    }
    // The earliest complete occurrence of any stop string (longest at the same start).
    size_t first = std::string::npos;
    const std::string *hit = nullptr;
    for (const std::string &s : m_stops) {
        const size_t at = m_tail.find(s);
        if (at != std::string::npos && (at < first || (at == first && s.size() > hit->size()))) {
            first = at;
            hit = &s;
        }
    }
    if (hit) {
        r.text = m_tail.substr(0, first);
        r.stopped = true;
        m_stopped = true;
        m_matched = *hit;
        m_tail.clear();
        return r;
    }
    // Hold back the longest suffix that is a proper prefix of some stop string.
    size_t keep = 0;
    for (const std::string &s : m_stops) {
        const size_t maxLen = std::min(s.size() - 1, m_tail.size());
        for (size_t len = maxLen; len > keep; --len) {
            if (m_tail.compare(m_tail.size() - len, len, s, 0, len) == 0) {
                keep = len;
                break;
            }
        }
    }
    r.text = m_tail.substr(0, m_tail.size() - keep);
    m_tail.erase(0, m_tail.size() - keep);
    return r;
}

std::string StopMatcher::flush()
{
    std::string out;
    if (!m_stopped)
        out.swap(m_tail);
    m_tail.clear();
    return out;
}

} // namespace waste::text
