// DeepSeek-V3.1's chat template, segment for segment. What sets it apart from R1's
// (deepseek_template.cpp):
//   - thinking is a switch (the `thinking` or `enable_thinking` variable, off by default):
//     the generation prompt ends in <think> when on and in </think> when off, and an
//     assistant turn that answers a user is opened with </think>;
//   - a call is NAME<｜tool▁sep｜>ARGS, with no "function" type and no ```json fence;
//   - tool results have no outputs section around them, and no generation prompt follows
//     them (the model writes its answer straight after the last result);
//   - an earlier answer drops what comes up to its first </think>.
// Its quirks are the release's and are kept: the system prompts are joined and written
// first; `tool_calls: []` still writes an (empty) calls section.
#include "text/deepseek_markers.hpp"
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;
using namespace deepseek;

Segments renderDeepSeekV31(const Json &request)
{
    const Json &msgs = family::messages(request);
    const bool thinking = deepSeekV31Thinking(request);
    SegmentWriter w;
    w.markup(kBos);
    w.text(family::systemText(msgs));
    bool isFirst = false, isTool = false, isLastUser = false;
    for (const Json &m : msgs) {
        const std::string role = family::role(m);
        if (role == "user") {
            isTool = isFirst = false;
            isLastUser = true;
            w.markup(kUser);
            w.text(family::contentText(m));
        } else if (role == "assistant" && family::hasToolCallsField(m)) {
            if (isLastUser)
                w.markup(kAssistant + "</think>");
            isLastUser = isFirst = isTool = false;
            for (const Json &call : family::toolCalls(m)) {
                const Json &fn = family::function(call);
                if (!isFirst) {
                    w.text(family::contentText(m));
                    w.markup(kCallsBegin + kCallBegin);
                    isFirst = true;
                } else {
                    w.markup(kCallBegin);
                }
                w.text(family::stringOr(fn, "name"));
                w.markup(kSep);
                w.text(family::argumentsText(fn));
                w.markup(kCallEnd);
            }
            w.markup(kCallsEnd + kEos);
        } else if (role == "assistant") {
            if (isLastUser) {
                const auto prefix = m.find("prefix");
                const bool prefixed = prefix != m.end() && prefix->is_boolean() && prefix->get<bool>();
                w.markup(kAssistant + (prefixed && thinking ? "<think>" : "</think>"));
            }
            isLastUser = false;
            std::string content = family::contentText(m);
            if (isTool) {
                isTool = false;
            } else if (const size_t at = content.find("</think>"); at != std::string::npos) {
                content = content.substr(at + 8); // earlier turns drop their reasoning
            }
            w.text(content);
            w.markup(kEos);
        } else if (role == "tool") {
            isLastUser = false;
            isTool = true;
            w.markup(kOutputBegin);
            w.text(family::contentText(m));
            w.markup(kOutputEnd);
        }
    }
    if (family::addGenerationPrompt(request) && isLastUser && !isTool)
        w.markup(kAssistant + (thinking ? "<think>" : "</think>"));
    return w.take();
}

bool deepSeekV31Thinking(const Json &request)
{
    for (const char *key : {"thinking", "enable_thinking"}) {
        const auto it = request.find(key);
        if (it == request.end() || it->is_null())
            continue;
        if (it->is_boolean())
            return it->get<bool>();
        if (it->is_object())
            return it->value("type", "") != "disabled";
    }
    // The OpenAI spelling (the API server's reasoning effort): any effort but none asks for it.
    for (const char *key : {"thinking_effort", "reasoning_effort"}) {
        const auto it = request.find(key);
        if (it != request.end() && it->is_string())
            return !(*it == "none" || *it == "minimal" || *it == "off");
    }
    return false;
}

} // namespace waste::text
