// Reading an OpenAI-style chat request for the family templates (family_templates.hpp):
// the pieces every template needs, with the same refusals everywhere.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace waste::text::family {

using Json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string &what);

// The request's messages (an array of objects with a string role), or a refusal.
const Json &messages(const Json &request);
std::string role(const Json &message);
// A message's content as text: a string, the text parts of an array joined, "" for null
// or absent.
std::string contentText(const Json &message);
// Whether `content` is present and not null (Jinja's `is not none`).
bool hasContent(const Json &message);
// A string field, or "" when absent or not a string.
std::string stringOr(const Json &obj, const char *key);
// Every system message's text, in order, joined by a blank line (DeepSeek's templates
// gather them all ahead of the conversation).
std::string systemText(const Json &messages);
// Whether the message has a `tool_calls` field that is not null (Jinja's `is defined and
// is not none`), empty or not.
bool hasToolCallsField(const Json &message);
// The tool calls of an assistant message (an empty array when it has none).
const Json &toolCalls(const Json &message);
// A tool call's function object (the call itself when it has no "function").
const Json &function(const Json &call);
// Arguments as the templates write them: a string as it is, anything else as Hugging
// Face's tojson writes it (json.dumps, non-ASCII kept).
std::string argumentsText(const Json &fn);
// A call's arguments as a template iterates them (`arguments|items`): an object, a JSON text
// parsed first; refused, naming `family`, when they are not an object (GLM and Qwen3.5 write
// each argument as its own pair or parameter).
Json argumentsObject(const Json &fn, const char *family);
// Hugging Face's tojson filter.
std::string toJson(const Json &v);
bool addGenerationPrompt(const Json &request);

// Python's str.lstrip / rstrip of the characters in `chars` (the templates strip "\n"),
// and str.strip() of ASCII whitespace.
std::string lstrip(const std::string &s, const char *chars);
std::string rstrip(const std::string &s, const char *chars);
std::string strip(const std::string &s);

} // namespace waste::text::family
