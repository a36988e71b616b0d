// DeepSeek-R1's chat template (the V3 family's format), segment for segment. Its quirks
// are the release's and are kept: the system prompts are joined and written first; the
// "first call" and "first tool output" flags are set once per conversation, so a later
// assistant message with calls continues the earlier calls section's layout.
#include "text/deepseek_markers.hpp"
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;
using namespace deepseek;

Segments renderDeepSeek(const Json &request)
{
    const Json &msgs = family::messages(request);
    SegmentWriter w;
    w.markup(kBos);
    w.text(family::systemText(msgs));
    bool isFirst = false, isTool = false, isOutputFirst = true;
    for (const Json &m : msgs) {
        const std::string role = family::role(m);
        if (role == "user") {
            isTool = false;
            w.markup(kUser);
            w.text(family::contentText(m));
        } else if (role == "assistant" && family::hasToolCallsField(m)) {
            isTool = false;
            for (const Json &call : family::toolCalls(m)) {
                const Json &fn = family::function(call);
                if (!isFirst) {
                    w.markup(kAssistant);
                    if (family::hasContent(m))
                        w.text(family::contentText(m));
                    w.markup(kCallsBegin + kCallBegin);
                    isFirst = true;
                } else {
                    w.markup("\n" + kCallBegin);
                }
                w.text(family::stringOr(call, "type").empty() ? "function" : family::stringOr(call, "type"));
                w.markup(kSep);
                w.text(family::stringOr(fn, "name") + "\n```json\n" + family::argumentsText(fn) + "\n```");
                w.markup(kCallEnd);
            }
            w.markup(kCallsEnd + kEos);
        } else if (role == "assistant") {
            if (isTool) {
                w.markup(kOutputsEnd);
                w.text(family::contentText(m));
                w.markup(kEos);
                isTool = false;
            } else {
                std::string content = family::contentText(m);
                if (const size_t at = content.rfind("</think>"); at != std::string::npos)
                    content = content.substr(at + 8); // earlier turns drop their reasoning
                w.markup(kAssistant);
                w.text(content);
                w.markup(kEos);
            }
        } else if (role == "tool") {
            isTool = true;
            w.markup(isOutputFirst ? kOutputsBegin + kOutputBegin : kOutputBegin);
            isOutputFirst = false;
            w.text(family::contentText(m));
            w.markup(kOutputEnd);
        }
    }
    if (isTool)
        w.markup(kOutputsEnd);
    if (family::addGenerationPrompt(request) && !isTool)
        w.markup(familyThinkingEnabled(request) ? kAssistant + "<think>\n" : kAssistant);
    return w.take();
}

bool familyThinkingEnabled(const Json &request)
{
    for (const char *key : {"thinking", "enable_thinking"}) {
        const auto it = request.find(key);
        if (it != request.end() && it->is_boolean() && !it->get<bool>())
            return false;
        if (it != request.end() && it->is_object() && it->value("type", "") == "disabled")
            return false;
    }
    // The OpenAI spelling (and the API server's for the Responses API), as K3 reads it.
    for (const char *key : {"thinking_effort", "reasoning_effort"}) {
        const auto it = request.find(key);
        if (it != request.end() && it->is_string() &&
            (*it == "none" || *it == "minimal" || *it == "off"))
            return false;
    }
    return true;
}

} // namespace waste::text
