// Qwen3.5-MoE's chat template (docs/architectures/qwen3.5-moe.md), segment for segment: ChatML
// turns with every message's content trimmed; the tools block ("# Tools", one JSON line per
// tool in <tools>, the fixed instructions) as the system turn, the system message after it;
// assistant turns after the last real user query as <think>\nREASONING\n</think>\n\n then
// the content, earlier ones without reasoning; calls in Qwen3-Coder's XML
// (<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>\n</tool_call>,
// a mapping or list value as JSON, any other as Python's str() writes it); consecutive tool
// results in one user turn; the generation prompt opens <think>\n ("enable_thinking": false
// closes it empty). Checked against the release's Jinja by tests/chat_templates.
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/python_json.hpp"
#include "text/segment_writer.hpp"

namespace waste::text {

using family::Json;

namespace {

constexpr const char *kToolsHead = "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>";
constexpr const char *kToolsTail =
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n"
    "<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
    "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: "
    "an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required "
    "parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language "
    "BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal "
    "with your current knowledge and do not tell the user about function calls\n</IMPORTANT>";

// Jinja's |trim: Python's str.strip() (whitespace at both ends).
std::string trimmed(const Json &m) { return family::strip(family::contentText(m)); }

// A parameter's value as the template writes it: a mapping or a non-string sequence
// through tojson, anything else through Jinja's |string (Python's str(): True, None, 1.5).
std::string parameterText(const Json &v)
{
    if (v.is_object() || v.is_array())
        return family::toJson(v);
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_null())
        return "None";
    if (v.is_number_float())
        return pyFloatRepr(v.get<double>());
    return v.dump(); // an integer
}

void writeAssistant(SegmentWriter &w, const Json &m, bool keepReasoning)
{
    std::string content = trimmed(m), reasoning;
    if (m.contains("reasoning_content") && m["reasoning_content"].is_string()) {
        reasoning = m["reasoning_content"].get<std::string>();
    } else if (const size_t close = content.find("</think>"); close != std::string::npos) {
        // split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n'), and after the last.
        const std::string before = family::rstrip(content.substr(0, close), "\n");
        const size_t open = before.rfind("<think>");
        reasoning = family::lstrip(open == std::string::npos ? before : before.substr(open + 7), "\n");
        content = family::lstrip(content.substr(content.rfind("</think>") + 8), "\n");
    }
    reasoning = family::strip(reasoning);
    if (keepReasoning) {
        w.markup("<|im_start|>assistant\n<think>\n");
        w.text(reasoning);
        w.markup("\n</think>\n\n");
    } else {
        w.markup("<|im_start|>assistant\n");
    }
    w.text(content);
    const Json &calls = family::toolCalls(m);
    for (size_t j = 0; j < calls.size(); ++j) {
        const Json &fn = family::function(calls[j]);
        w.markup(j > 0 ? "\n<tool_call>\n<function=" : !family::strip(content).empty() ? "\n\n<tool_call>\n<function="
                                                                                      : "<tool_call>\n<function=");
        w.text(family::stringOr(fn, "name"));
        w.markup(">\n");
        const Json args = family::argumentsObject(fn, "Qwen3.5"); // held: items() only refers to it
        for (const auto &[key, value] : args.items()) {
            w.markup("<parameter=");
            w.text(key);
            w.markup(">\n");
            w.text(parameterText(value));
            w.markup("\n</parameter>\n");
        }
        w.markup("</function>\n</tool_call>");
    }
    w.markup("<|im_end|>\n");
}

} // namespace

Segments renderQwen35(const Json &request)
{
    const Json &msgs = family::messages(request);
    if (msgs.empty())
        family::bad("'messages' is empty");
    SegmentWriter w;
    const bool firstIsSystem = family::role(msgs[0]) == "system";
    if (const auto t = request.find("tools"); t != request.end() && t->is_array() && !t->empty()) {
        w.markup(kToolsHead);
        for (const Json &tool : *t) {
            w.markup("\n");
            w.text(family::toJson(tool));
        }
        w.markup(kToolsTail);
        if (firstIsSystem)
            if (const std::string s = trimmed(msgs[0]); !s.empty()) {
                w.markup("\n\n");
                w.text(s);
            }
        w.markup("<|im_end|>\n");
    } else if (firstIsSystem) {
        w.markup("<|im_start|>system\n");
        w.text(trimmed(msgs[0]));
        w.markup("<|im_end|>\n");
    }
    // The last user message that is a real query, not tool results passed as a user turn.
    bool found = false;
    size_t lastQuery = 0;
    for (size_t k = msgs.size(); k-- > 0 && !found;) {
        const std::string c = trimmed(msgs[k]);
        if (family::role(msgs[k]) == "user" && !(c.starts_with("<tool_response>") && c.ends_with("</tool_response>"))) {
            lastQuery = k;
            found = true;
        }
    }
    if (!found)
        family::bad("no user query found in 'messages' (Qwen3.5's template needs one)");
    for (size_t i = 0; i < msgs.size(); ++i) {
        const Json &m = msgs[i];
        const std::string role = family::role(m);
        if (role == "system") {
            if (i != 0)
                family::bad("a system message must come first (Qwen3.5's template)");
        } else if (role == "user") {
            w.markup("<|im_start|>user\n");
            w.text(trimmed(m));
            w.markup("<|im_end|>\n");
        } else if (role == "assistant") {
            writeAssistant(w, m, i > lastQuery);
        } else if (role == "tool") {
            if (i > 0 && family::role(msgs[i - 1]) != "tool")
                w.markup("<|im_start|>user");
            w.markup("\n<tool_response>\n");
            w.text(trimmed(m));
            w.markup("\n</tool_response>");
            if (i + 1 == msgs.size() || family::role(msgs[i + 1]) != "tool")
                w.markup("<|im_end|>\n");
        } else {
            family::bad("unexpected message role '" + role + "' (Qwen3.5 takes system, user, assistant and tool)");
        }
    }
    if (family::addGenerationPrompt(request)) {
        w.markup("<|im_start|>assistant\n");
        w.markup(familyThinkingEnabled(request) ? "<think>\n" : "<think>\n\n</think>\n\n");
    }
    return w.take();
}

} // namespace waste::text
