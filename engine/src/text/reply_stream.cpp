#include "text/reply_stream.hpp"

namespace waste::text {

ReplyStream::ReplyStream(std::shared_ptr<ReplyParser> parser, std::vector<std::string> stopStrings)
    : m_parser(std::move(parser)), m_stops(std::move(stopStrings))
{
}

ReplyDelta ReplyStream::filter(ReplyDelta d)
{
    if (m_stops.stopped()) {
        d.content.clear(); // past a stop string nothing more is said
    } else if (!d.content.empty()) {
        const StopMatcher::Result r = m_stops.push(d.content);
        d.content = r.text;
        if (r.stopped)
            m_ended = true;
    }
    if (d.done)
        m_ended = true;
    m_reply.reasoning += d.reasoning;
    m_reply.content += d.content;
    m_reply.toolCalls.insert(m_reply.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
    return d;
}

ReplyDelta ReplyStream::push(int32_t token, bool stopToken)
{
    if (m_finished)
        return ReplyDelta{{}, {}, {}, true};
    if (stopToken)
        return finish();
    return filter(m_parser->feed(token));
}

ReplyDelta ReplyStream::finish()
{
    if (m_finished)
        return ReplyDelta{{}, {}, {}, true};
    ReplyDelta d = filter(m_parser->finish());
    if (!m_stops.stopped()) {
        const std::string held = m_stops.flush();
        d.content += held;
        m_reply.content += held;
    }
    m_finished = true;
    m_ended = true;
    d.done = true;
    return d;
}

} // namespace waste::text
