// A model's reply split the way an OpenAI client wants it. The types are public
// (waste/waste.hpp) so front ends can use the parsers; the engine's text code names
// them here.
#pragma once

#include "waste/waste.hpp"

namespace waste::text {

using ToolCall = waste::ReplyToolCall;
using ChatReply = waste::ChatReply;
using ReplyDelta = waste::ReplyDelta;

} // namespace waste::text
