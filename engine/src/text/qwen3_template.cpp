// Qwen3's chat template, segment for segment: ChatML turns; tools listed in the system
// turn inside <tools>; calls as <tool_call>{"name": ..., "arguments": ...}</tool_call>;
// consecutive tool results in one user turn, each in <tool_response>; reasoning kept in
// <think> only for assistant turns after the last real user query.
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;

namespace {

constexpr const char *kToolsHead = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                                   "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr const char *kToolsTail =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
    "</tool_call><|im_end|>\n";

bool startsWith(const std::string &s, const std::string &p) { return s.compare(0, p.size(), p) == 0; }
bool endsWith(const std::string &s, const std::string &p)
{
    return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

} // namespace

Segments renderQwen3(const Json &request)
{
    const Json &msgs = family::messages(request);
    if (msgs.empty())
        family::bad("'messages' is empty");
    SegmentWriter w;
    const bool firstIsSystem = family::role(msgs[0]) == "system";
    if (const auto t = request.find("tools"); t != request.end() && t->is_array() && !t->empty()) {
        w.markup("<|im_start|>system\n");
        if (firstIsSystem) {
            w.text(family::contentText(msgs[0]));
            w.markup("\n\n");
        }
        w.markup(kToolsHead);
        for (const Json &tool : *t) {
            w.markup("\n");
            w.text(family::toJson(tool));
        }
        w.markup(kToolsTail);
    } else if (firstIsSystem) {
        w.markup("<|im_start|>system\n");
        w.text(family::contentText(msgs[0]));
        w.markup("<|im_end|>\n");
    }
    // The last user message that is a real query, not tool results passed as a user turn.
    size_t lastQuery = msgs.size() - 1;
    for (size_t k = msgs.size(); k-- > 0;) {
        const std::string c = family::contentText(msgs[k]);
        if (family::role(msgs[k]) == "user" && !(startsWith(c, "<tool_response>") && endsWith(c, "</tool_response>"))) {
            lastQuery = k;
            break;
        }
    }
    for (size_t i = 0; i < msgs.size(); ++i) {
        const Json &m = msgs[i];
        const std::string role = family::role(m);
        const bool last = i + 1 == msgs.size();
        if (role == "user" || (role == "system" && i != 0)) {
            w.markup("<|im_start|>" + role + "\n");
            w.text(family::contentText(m));
            w.markup("<|im_end|>\n");
        } else if (role == "assistant") {
            const std::string raw = family::contentText(m);
            std::string content = raw, reasoning;
            if (m.contains("reasoning_content") && !m["reasoning_content"].is_null()) {
                reasoning = family::stringOr(m, "reasoning_content");
            } else if (const size_t at = raw.find("</think>"); at != std::string::npos) {
                content = family::lstrip(raw.substr(raw.rfind("</think>") + 8), "\n");
                std::string before = family::rstrip(raw.substr(0, at), "\n");
                if (const size_t open = before.rfind("<think>"); open != std::string::npos)
                    before = before.substr(open + 7);
                reasoning = family::lstrip(before, "\n");
            }
            if (i > lastQuery && (last || !reasoning.empty())) {
                w.markup("<|im_start|>assistant\n<think>\n");
                w.text(family::rstrip(family::lstrip(reasoning, "\n"), "\n"));
                w.markup("\n</think>\n\n");
                w.text(family::lstrip(content, "\n"));
            } else {
                w.markup("<|im_start|>assistant\n");
                w.text(content);
            }
            const Json &calls = family::toolCalls(m);
            for (size_t j = 0; j < calls.size(); ++j) {
                if ((j == 0 && !content.empty()) || j > 0)
                    w.markup("\n");
                const Json &fn = family::function(calls[j]);
                w.markup("<tool_call>\n{\"name\": \"");
                w.text(family::stringOr(fn, "name"));
                w.markup("\", \"arguments\": ");
                w.text(family::argumentsText(fn));
                w.markup("}\n</tool_call>");
            }
            w.markup("<|im_end|>\n");
        } else if (role == "tool") {
            if (i == 0 || family::role(msgs[i - 1]) != "tool")
                w.markup("<|im_start|>user");
            w.markup("\n<tool_response>\n");
            w.text(family::contentText(m));
            w.markup("\n</tool_response>");
            if (last || family::role(msgs[i + 1]) != "tool")
                w.markup("<|im_end|>\n");
        }
    }
    if (family::addGenerationPrompt(request)) {
        w.markup("<|im_start|>assistant\n");
        if (!familyThinkingEnabled(request))
            w.markup("<think>\n\n</think>\n\n");
    }
    return w.take();
}

} // namespace waste::text
