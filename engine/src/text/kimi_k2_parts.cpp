#include "text/kimi_k2_parts.hpp"

namespace waste::text::kimi {

using family::Json;

namespace {
constexpr const char *kMedia = "<|media_start|>image<|media_content|><|media_pad|><|media_end|>";
}

void toolDeclaration(SegmentWriter &w, const Json &request)
{
    if (const auto t = request.find("tools"); t != request.end() && t->is_array() && !t->empty()) {
        w.markup("<|im_system|>tool_declare<|im_middle|>");
        w.text(family::toJson(*t));
        w.markup("<|im_end|>");
    }
}

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

void roleHeader(SegmentWriter &w, const Json &m)
{
    const std::string role = family::role(m);
    const std::string name = family::stringOr(m, "name");
    w.markup(role == "user" ? "<|im_user|>" : role == "assistant" ? "<|im_assistant|>" : "<|im_system|>");
    w.text(name.empty() ? role : name);
    w.markup("<|im_middle|>");
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

void toolResult(SegmentWriter &w, const Json &m)
{
    w.markup("## Return of ");
    w.text(family::stringOr(m, "tool_call_id"));
    w.markup("\n");
    content(w, m);
}

void generationPrompt(SegmentWriter &w, const Json &request)
{
    if (family::addGenerationPrompt(request))
        w.markup("<|im_assistant|>assistant<|im_middle|>");
}

} // namespace waste::text::kimi
