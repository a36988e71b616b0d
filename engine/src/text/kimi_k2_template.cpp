// Kimi-K2-Thinking's chat template, segment for segment: tools declared in a
// tool_declare system message, a default system prompt when the conversation has none,
// assistant turns up to the last plain answer written with an empty <think></think>
// (their reasoning dropped), later ones with theirs, tool results as "## Return of ID".
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;

namespace {

constexpr const char *kDefaultSystem = "You are Kimi, an AI assistant created by Moonshot AI.";
constexpr const char *kMedia = "<|media_start|>image<|media_content|><|media_pad|><|media_end|>";

// render_content: a string as it is; parts in order, an image as its media markup and a newline.
void content(SegmentWriter &w, const Json &m)
{
    const auto it = m.find("content");
    if (it == m.end() || it->is_null())
        return;
    if (it->is_string()) {
        w.text(it->get<std::string>());
        return;
    }
    if (!it->is_array())
        family::bad("message content must be a string, an array of parts or null");
    for (const Json &part : *it) {
        if (!part.is_object())
            continue;
        if (part.value("type", "") == "image" || part.contains("image") || part.contains("image_url")) {
            w.markup(kMedia);
            w.markup("\n");
        } else {
            w.text(family::stringOr(part, "text"));
        }
    }
}

void toolCalls(SegmentWriter &w, const Json &m)
{
    w.markup("<|tool_calls_section_begin|>");
    for (const Json &call : family::toolCalls(m)) {
        w.markup("<|tool_call_begin|>");
        w.text(family::stringOr(call, "id"));
        w.markup("<|tool_call_argument_begin|>");
        w.text(family::argumentsText(family::function(call)));
        w.markup("<|tool_call_end|>");
    }
    w.markup("<|tool_calls_section_end|>");
}

void message(SegmentWriter &w, const Json &m, bool keepReasoning)
{
    const std::string role = family::role(m);
    const std::string name = family::stringOr(m, "name");
    w.markup(role == "user" ? "<|im_user|>" : role == "assistant" ? "<|im_assistant|>" : "<|im_system|>");
    w.text(name.empty() ? role : name);
    w.markup("<|im_middle|>");
    if (role == "assistant") {
        w.markup("<think>");
        if (keepReasoning)
            w.text(family::stringOr(m, "reasoning_content"));
        w.markup("</think>");
        content(w, m);
        if (!family::toolCalls(m).empty())
            toolCalls(w, m);
    } else if (role == "tool") {
        w.markup("## Return of ");
        w.text(family::stringOr(m, "tool_call_id"));
        w.markup("\n");
        content(w, m);
    } else {
        content(w, m);
    }
    w.markup("<|im_end|>");
}

} // namespace

Segments renderKimiK2(const Json &request)
{
    const Json &msgs = family::messages(request);
    // Reasoning is kept after the last assistant message that makes no calls.
    long lastAnswer = -1;
    for (long i = long(msgs.size()) - 1; i >= 0; --i) {
        if (family::role(msgs[size_t(i)]) == "assistant" && family::toolCalls(msgs[size_t(i)]).empty()) {
            lastAnswer = i;
            break;
        }
    }
    SegmentWriter w;
    if (const auto t = request.find("tools"); t != request.end() && t->is_array() && !t->empty()) {
        w.markup("<|im_system|>tool_declare<|im_middle|>");
        w.text(family::toJson(*t));
        w.markup("<|im_end|>");
    }
    if (msgs.empty() || family::role(msgs[0]) != "system")
        w.markup(std::string("<|im_system|>system<|im_middle|>") + kDefaultSystem + "<|im_end|>");
    for (size_t i = 0; i < msgs.size(); ++i)
        message(w, msgs[i], long(i) > lastAnswer);
    if (family::addGenerationPrompt(request))
        w.markup("<|im_assistant|>assistant<|im_middle|>");
    return w.take();
}

} // namespace waste::text
