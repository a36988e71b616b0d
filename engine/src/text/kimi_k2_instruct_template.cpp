// Kimi-K2-Instruct's chat template (K2-Instruct and K2-Instruct-0905), segment for
// segment. Kimi K2's markup without reasoning: no <think> block anywhere, assistant turns
// as their content and calls. Its own quirks, kept: the default system prompt is written
// before the first message only (none for an empty conversation) and ends with a newline;
// a calls section is written only for a non-empty tool_calls list.
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/kimi_k2_parts.hpp"

namespace waste::text {

using family::Json;

Segments renderKimiK2Instruct(const Json &request)
{
    const Json &msgs = family::messages(request);
    SegmentWriter w;
    kimi::toolDeclaration(w, request);
    for (size_t i = 0; i < msgs.size(); ++i) {
        const Json &m = msgs[i];
        if (i == 0 && family::role(m) != "system")
            w.markup(std::string("<|im_system|>system<|im_middle|>") + kimi::kDefaultSystem + "<|im_end|>\n");
        kimi::roleHeader(w, m);
        const std::string role = family::role(m);
        if (role == "assistant" && !family::toolCalls(m).empty()) {
            kimi::content(w, m);
            kimi::toolCalls(w, m);
        } else if (role == "tool") {
            kimi::toolResult(w, m);
        } else {
            kimi::content(w, m);
        }
        w.markup("<|im_end|>");
    }
    kimi::generationPrompt(w, request);
    return w.take();
}

} // namespace waste::text
