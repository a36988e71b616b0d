// The generation loop's side of GenParams::reply: feeds each generated token to the
// reply parser (stop tokens end it instead of being read as text) and applies stop
// strings to the parsed content, so a stop string cuts the answer, not the markup
// around it, and never reaches the client.
#pragma once

#include "text/chat_reply.hpp"
#include "text/stop_matcher.hpp"

#include <memory>
#include <string>
#include <vector>

namespace waste::text {

class ReplyStream {
public:
    ReplyStream(std::shared_ptr<ReplyParser> parser, std::vector<std::string> stopStrings);

    // A generated token; stopToken: it ended generation (EOS or a caller stop token).
    ReplyDelta push(int32_t token, bool stopToken);
    // Generation ended (any reason): releases what is held. Idempotent.
    ReplyDelta finish();
    // The message ended (the parser says so) or a stop string matched.
    bool ended() const { return m_ended; }
    const ChatReply &reply() const { return m_reply; }

private:
    ReplyDelta filter(ReplyDelta d);

    std::shared_ptr<ReplyParser> m_parser;
    StopMatcher m_stops;
    ChatReply m_reply;
    bool m_ended = false;
    bool m_finished = false;
};

} // namespace waste::text
