#include "text/chat_reply.hpp"

namespace waste {

void ReplyDelta::append(const ReplyDelta &more)
{
    reasoning += more.reasoning;
    content += more.content;
    toolCalls.insert(toolCalls.end(), more.toolCalls.begin(), more.toolCalls.end());
    done = done || more.done;
}

} // namespace waste
