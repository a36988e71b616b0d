// GLM's two chat template layouts (docs/architectures/glm4-moe.md), segment for segment:
//   - GLM-4.5 / 4.6: [gMASK]<sop>; the tools block as a first <|system|> turn; each role
//     marker followed by a newline; assistant turns as <think>REASONING</think> (kept only
//     after the last user message, else empty), the stripped content, and calls as
//     <tool_call>NAME with one <arg_key>/<arg_value> pair per argument (a string value as it
//     is, any other as JSON), one per line; consecutive tool results after one
//     <|observation|>. "enable_thinking": false appends /nothink to user turns and closes the
//     generation prompt's think block empty. Checked against the release's Jinja by
//     tests/chat_templates (GLM-4.6's, which differs from 4.5's only in keeping non-ASCII in
//     the tools' JSON, as this does).
//   - GLM-4.7 (and GLM-5.x): the same markers with no newline after any of them or inside a
//     call; an assistant turn whose reasoning is not kept writes a bare </think>; the
//     generation prompt opens <think> (or writes </think> with thinking off, no /nothink);
//     "clear_thinking": false (also inside "thinking", as Z.ai's API spells it) keeps every
//     turn's reasoning ("preserved thinking"). A tool result given as parts is written as
//     their text, as a string result is (the template would write Python's repr of each part).
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;

namespace {

struct Layout {
    bool oneLine = false; // GLM-4.7's: no newline after the markers or inside calls
    const char *nl() const { return oneLine ? "" : "\n"; }
};

constexpr const char *kToolsHead = "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                                   "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
constexpr const char *kToolsTail45 =
    "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n"
    "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n"
    "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";
constexpr const char *kToolsTail47 =
    "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n"
    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value>"
    "<arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>";

// "clear_thinking": false at the top (chat_template_kwargs) or inside "thinking" (Z.ai's API).
bool keepsAllReasoning(const Json &request)
{
    if (const auto it = request.find("clear_thinking"); it != request.end() && it->is_boolean())
        return !it->get<bool>();
    if (const auto t = request.find("thinking"); t != request.end() && t->is_object())
        if (const auto c = t->find("clear_thinking"); c != t->end() && c->is_boolean())
            return !c->get<bool>();
    return false;
}

void writeAssistant(SegmentWriter &w, const Json &m, bool keepReasoning, Layout layout)
{
    std::string content = family::contentText(m), reasoning;
    if (m.contains("reasoning_content") && m["reasoning_content"].is_string()) {
        reasoning = m["reasoning_content"].get<std::string>();
    } else if (const size_t close = content.find("</think>"); close != std::string::npos) {
        // The text before the first </think> (after its last <think>), and after the last one.
        const std::string before = family::rstrip(content.substr(0, close), "\n");
        const size_t open = before.rfind("<think>");
        reasoning = family::lstrip(open == std::string::npos ? before : before.substr(open + 7), "\n");
        content = family::lstrip(content.substr(content.rfind("</think>") + 8), "\n");
    }
    w.markup("<|assistant|>");
    if (keepReasoning && !reasoning.empty()) {
        w.markup(std::string(layout.nl()) + "<think>");
        w.text(family::strip(reasoning));
        w.markup("</think>");
    } else {
        w.markup(layout.oneLine ? "</think>" : "\n<think></think>");
    }
    if (const std::string c = family::strip(content); !c.empty()) {
        w.markup(layout.nl());
        w.text(c);
    }
    for (const Json &call : family::toolCalls(m)) {
        const Json &fn = family::function(call);
        w.markup(std::string(layout.nl()) + "<tool_call>");
        w.text(family::stringOr(fn, "name"));
        w.markup(layout.nl());
        const Json args = family::argumentsObject(fn, "GLM"); // held: items() only refers to it
        for (const auto &[key, value] : args.items()) {
            w.markup("<arg_key>");
            w.text(key);
            w.markup(std::string("</arg_key>") + layout.nl() + "<arg_value>");
            w.text(value.is_string() ? value.get<std::string>() : family::toJson(value));
            w.markup(std::string("</arg_value>") + layout.nl());
        }
        w.markup("</tool_call>");
    }
}

Segments renderGlm(const Json &request, Layout layout)
{
    const Json &msgs = family::messages(request);
    if (msgs.empty())
        family::bad("'messages' is empty");
    const bool thinking = familyThinkingEnabled(request);
    const bool keepAll = layout.oneLine && keepsAllReasoning(request);
    SegmentWriter w;
    w.markup("[gMASK]<sop>");
    if (const auto t = request.find("tools"); t != request.end() && t->is_array() && !t->empty()) {
        w.markup(kToolsHead);
        for (const Json &tool : *t) {
            w.text(family::toJson(tool));
            w.markup("\n");
        }
        w.markup(layout.oneLine ? kToolsTail47 : kToolsTail45);
    }
    size_t lastUser = 0;
    bool anyUser = false;
    for (size_t i = 0; i < msgs.size(); ++i)
        if (family::role(msgs[i]) == "user") {
            lastUser = i;
            anyUser = true;
        }
    for (size_t i = 0; i < msgs.size(); ++i) {
        const Json &m = msgs[i];
        const std::string role = family::role(m);
        if (role == "user") {
            const std::string text = family::contentText(m);
            w.markup(std::string("<|user|>") + layout.nl());
            w.text(text);
            if (!layout.oneLine && !thinking && !text.ends_with("/nothink"))
                w.markup("/nothink");
        } else if (role == "assistant") {
            writeAssistant(w, m, keepAll || !anyUser || i > lastUser, layout);
        } else if (role == "tool") {
            if (i == 0 || family::role(msgs[i - 1]) != "tool")
                w.markup("<|observation|>");
            w.markup(std::string(layout.nl()) + "<tool_response>" + layout.nl());
            w.text(family::contentText(m));
            w.markup(std::string(layout.nl()) + "</tool_response>");
        } else if (role == "system") {
            w.markup(std::string("<|system|>") + layout.nl());
            w.text(family::contentText(m));
        }
    }
    if (family::addGenerationPrompt(request)) {
        w.markup("<|assistant|>");
        if (layout.oneLine)
            w.markup(thinking ? "<think>" : "</think>");
        else if (!thinking)
            w.markup("\n<think></think>");
    }
    return w.take();
}

} // namespace

Segments renderGlm45(const Json &request) { return renderGlm(request, Layout{false}); }

Segments renderGlm47(const Json &request) { return renderGlm(request, Layout{true}); }

} // namespace waste::text
