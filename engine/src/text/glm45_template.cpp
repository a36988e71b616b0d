// GLM-4.5's and GLM-4.6's chat template (docs/architectures/glm4-moe.md), segment for
// segment: [gMASK]<sop>; the tools block as a first <|system|> turn; each role marker followed
// by a newline; assistant turns as <think>REASONING</think> (kept only after the last user
// message, else empty), the stripped content, and calls as <tool_call>NAME with one
// <arg_key>/<arg_value> pair per argument (a string value as it is, any other as JSON);
// consecutive tool results after one <|observation|>. "enable_thinking": false appends
// /nothink to user turns and closes the generation prompt's think block empty. Checked
// against the release's Jinja by tests/chat_templates (GLM-4.6's, which differs from 4.5's
// only in keeping non-ASCII in the tools' JSON, as this does).
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;

namespace {

constexpr const char *kToolsHead = "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                                   "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
constexpr const char *kToolsTail =
    "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n"
    "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n"
    "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";
// A call's arguments as the template iterates them: an object (a JSON text is parsed first).
Json argumentsObject(const Json &fn)
{
    if (!fn.contains("arguments") || fn["arguments"].is_null())
        return Json::object();
    Json args = fn["arguments"];
    if (args.is_string()) {
        try {
            args = Json::parse(args.get<std::string>().empty() ? std::string("{}") : args.get<std::string>());
        } catch (const Json::exception &) {
            family::bad("a tool call's arguments are not a JSON object (GLM writes each argument as its own pair)");
        }
    }
    if (!args.is_object())
        family::bad("a tool call's arguments are not a JSON object (GLM writes each argument as its own pair)");
    return args;
}

void writeAssistant(SegmentWriter &w, const Json &m, bool keepReasoning)
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
        w.markup("\n<think>");
        w.text(family::strip(reasoning));
        w.markup("</think>");
    } else {
        w.markup("\n<think></think>");
    }
    if (const std::string c = family::strip(content); !c.empty()) {
        w.markup("\n");
        w.text(c);
    }
    for (const Json &call : family::toolCalls(m)) {
        const Json &fn = family::function(call);
        w.markup("\n<tool_call>");
        w.text(family::stringOr(fn, "name"));
        w.markup("\n");
        const Json args = argumentsObject(fn); // held: items() only refers to it
        for (const auto &[key, value] : args.items()) {
            w.markup("<arg_key>");
            w.text(key);
            w.markup("</arg_key>\n<arg_value>");
            w.text(value.is_string() ? value.get<std::string>() : family::toJson(value));
            w.markup("</arg_value>\n");
        }
        w.markup("</tool_call>");
    }
}

} // namespace

Segments renderGlm45(const Json &request)
{
    const Json &msgs = family::messages(request);
    if (msgs.empty())
        family::bad("'messages' is empty");
    const bool thinking = familyThinkingEnabled(request);
    SegmentWriter w;
    w.markup("[gMASK]<sop>");
    if (const auto t = request.find("tools"); t != request.end() && t->is_array() && !t->empty()) {
        w.markup(kToolsHead);
        for (const Json &tool : *t) {
            w.text(family::toJson(tool));
            w.markup("\n");
        }
        w.markup(kToolsTail);
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
            w.markup("<|user|>\n");
            w.text(text);
            if (!thinking && !text.ends_with("/nothink"))
                w.markup("/nothink");
        } else if (role == "assistant") {
            writeAssistant(w, m, !anyUser || i > lastUser);
        } else if (role == "tool") {
            if (i == 0 || family::role(msgs[i - 1]) != "tool")
                w.markup("<|observation|>");
            w.markup("\n<tool_response>\n");
            w.text(family::contentText(m));
            w.markup("\n</tool_response>");
        } else if (role == "system") {
            w.markup("<|system|>\n");
            w.text(family::contentText(m));
        }
    }
    if (family::addGenerationPrompt(request)) {
        w.markup("<|assistant|>");
        if (!thinking)
            w.markup("\n<think></think>");
    }
    return w.take();
}

} // namespace waste::text
