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
    kimi::toolDeclaration(w, request);
    if (msgs.empty() || family::role(msgs[0]) != "system")
        w.markup(std::string("<|im_system|>system<|im_middle|>") + kimi::kDefaultSystem + "<|im_end|>");
    for (size_t i = 0; i < msgs.size(); ++i)
        message(w, msgs[i], long(i) > lastAnswer);
    kimi::generationPrompt(w, request);
    return w.take();
}

} // namespace waste::text
