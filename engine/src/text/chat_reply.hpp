// A model's reply split the way an OpenAI client wants it.
#pragma once

#include <string>
#include <vector>

namespace waste::text {

struct ToolCall {
    std::string id;        // "call_1", "call_2", ... in order of appearance
    std::string name;
    std::string arguments; // JSON text (an object), or the raw text the model wrote
};

struct ChatReply {
    std::string reasoning;
    std::string content;
    std::vector<ToolCall> toolCalls;
};

// What one step of an incremental parse adds (text is always whole UTF-8 characters).
struct ReplyDelta {
    std::string reasoning;
    std::string content;
    std::vector<ToolCall> toolCalls; // calls completed by this step
    bool done = false;               // the message ended
};

} // namespace waste::text
