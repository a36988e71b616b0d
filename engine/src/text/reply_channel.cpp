#include "text/reply_channel.hpp"

namespace waste::text {

std::string trimReplyWs(std::string_view s)
{
    const size_t a = s.find_first_not_of(kReplyWs);
    if (a == std::string_view::npos)
        return {};
    return std::string(s.substr(a, s.find_last_not_of(kReplyWs) - a + 1));
}

void ReplyChannel::emit(std::string_view bytes, std::string &delta, std::string &total)
{
    if (!m_started) {
        const size_t a = bytes.find_first_not_of(kReplyWs);
        if (a == std::string_view::npos)
            return;
        bytes.remove_prefix(a);
        m_started = true;
    }
    const size_t b = bytes.find_last_not_of(kReplyWs);
    if (b == std::string_view::npos) {
        m_heldWs.append(bytes);
        return;
    }
    const std::string t = m_utf8.push(m_heldWs + std::string(bytes.substr(0, b + 1)));
    m_heldWs.assign(bytes.substr(b + 1));
    delta += t;
    total += t;
}

void ReplyChannel::flush(std::string &delta, std::string &total)
{
    const std::string rest = m_utf8.flush();
    delta += rest;
    total += rest;
}

} // namespace waste::text
