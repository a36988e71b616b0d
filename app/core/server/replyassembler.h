// Turns a parsed reply (waste::ReplyDelta steps from the model's reply parser, which was given
// the request's declared tools: waste::Model::replyParser) into what an OpenAI client
// receives: stream deltas ("reasoning_content", "content", "tool_calls") as soon as they are
// known, and the whole message at the end. The parser has already decided what is a call
// (only declared functions, a bare JSON call read whole); this gives each call the id it
// carries on this server and counts the calls' indices.
#pragma once

#include "server/parsedreply.h"

#include <waste/waste.hpp>

#include <QJsonObject>
#include <QList>

class ChatReplyAssembler {
public:
    // One parser step; returns the stream deltas that may go out now (possibly none).
    QList<QJsonObject> push(const waste::ReplyDelta &delta);

    // The message so far (complete after the parser's last step).
    const ParsedReply &reply() const { return m_reply; }

private:
    ParsedReply m_reply;
};
