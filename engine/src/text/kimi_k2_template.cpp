// Kimi-K2-Thinking's chat template, segment for segment: tools declared in a
// tool_declare system message, a default system prompt when the conversation has none,
// assistant turns up to the last plain answer written with an empty <think></think>
// (their reasoning dropped), later ones with theirs, tool results as "## Return of ID".
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/kimi_k2_parts.hpp"

namespace waste::text {

using family::Json;

namespace {

constexpr const char *kDefaultSystem = "You are Kimi, an AI assistant created by Moonshot AI.";

void message(SegmentWriter &w, const Json &m, bool keepReasoning)
{
    const std::string role = family::role(m);
    kimi::roleHeader(w, m);
    if (role == "assistant") {
        w.markup("<think>");
        if (keepReasoning)
            w.text(family::stringOr(m, "reasoning_content"));
        w.markup("</think>");
        kimi::content(w, m);
        if (!family::toolCalls(m).empty())
            kimi::toolCalls(w, m);
    } else if (role == "tool") {
        kimi::toolResult(w, m);
    } else {
        kimi::content(w, m);
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
