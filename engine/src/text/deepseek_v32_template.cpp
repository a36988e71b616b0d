// DeepSeek-V3.2's prompt encoding (docs/architectures/dsa.md, "Chat formats"): the release
// ships no Jinja template and encodes in Python (encoding/encoding_dsv32.py's
// encode_messages). From an OpenAI-style request: BOS; a system message's content, then its
// tools block (the fixed "## Tools" text with one JSON schema a line inside <functions>) and
// its response format; every user turn <｜User｜>TEXT<｜Assistant｜> followed by <think> (the
// last user turn, thinking) or </think>; a developer turn as a user turn with its tools and
// response format inlined before "# The user's message is: "; an assistant turn as
// [reasoning</think> after the last user turn, thinking] content [DSML calls] EOS; the tool
// results of one assistant turn in one <function_results> block of <result>s, closed by
// <think> or </think> as the handover. Thinking drops the reasoning (and developer turns)
// before the last user turn. The request's `tools` go to the first system message (one with
// empty content is put first when there is none), as for DeepSeek V4. add_generation_prompt
// false leaves the last user turn's <｜Assistant｜> and think marker off.
#include "text/deepseek_markers.hpp"
#include "text/dsml_call.hpp"
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

#include <algorithm>

namespace waste::text {

using family::Json;

namespace {

const std::string kThinkOpen = "<think>", kThinkClose = "</think>";

std::string toolsHead()
{
    const std::string d = deepseek::kDsml;
    return "## Tools\n\nYou have access to a set of tools you can use to answer the user's question.\nYou can invoke "
           "functions by writing a \"<" + d + "function_calls>\" block like the following as part of your reply to the "
           "user:\n<" + d + "function_calls>\n<" + d + "invoke name=\"$FUNCTION_NAME\">\n<" + d +
           "parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</" + d + "parameter>\n...\n</" + d +
           "invoke>\n<" + d + "invoke name=\"$FUNCTION_NAME2\">\n...\n</" + d + "invoke>\n</" + d +
           "function_calls>\n\nString and scalar parameters should be specified as is without any escaping or quotes, "
           "while lists and objects should use JSON format. The \"string\" attribute should be set to \"true\" for "
           "string type parameters and \"false\" for other types (numbers, booleans, arrays, objects).\n\nIf the "
           "thinking_mode is enabled, then after function results you should strongly consider outputting a thinking "
           "block. Here is an example:\n\n<" + d + "function_calls>\n...\n</" + d + "function_calls>\n\n"
           "<function_results>\n...\n</function_results>\n\n" + kThinkOpen + "...thinking about results" + kThinkClose +
           "\n\nHere are the functions available in JSONSchema format:\n<functions>\n";
}

// "\n\n" and the tools block: the fixed text as markup, the schemas (one JSON line each) as text.
void writeTools(SegmentWriter &w, const Json &tools)
{
    w.markup("\n\n" + toolsHead());
    for (size_t i = 0; i < tools.size(); ++i) {
        if (i > 0)
            w.markup("\n");
        const Json &t = tools[i];
        w.text(family::toJson(t.is_object() && t.contains("function") ? t["function"] : t));
    }
    w.markup("\n</functions>\n");
}

void writeResponseFormat(SegmentWriter &w, const Json &format)
{
    w.markup("\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n");
    w.text(family::toJson(format));
}

bool has(const Json &m, const char *key)
{
    const auto it = m.find(key);
    return it != m.end() && !it->is_null() && !(it->is_array() && it->empty()) && !(it->is_object() && it->empty());
}

long lastUser(const std::vector<Json> &msgs)
{
    for (size_t i = msgs.size(); i-- > 0;) {
        const std::string r = family::role(msgs[i]);
        if (r == "user" || r == "developer")
            return long(i);
    }
    return -1;
}

} // namespace

Segments renderDeepSeekV32(const Json &request)
{
    const bool thinking = familyThinkingEnabled(request);
    std::vector<Json> msgs;
    for (const Json &m : family::messages(request)) {
        const std::string r = family::role(m);
        if (r != "system" && r != "user" && r != "developer" && r != "assistant" && r != "tool")
            family::bad("role '" + r + "' is not one DeepSeek-V3.2's encoder writes");
        msgs.push_back(m);
    }
    const auto t = request.find("tools");
    if (t != request.end() && t->is_array() && !t->empty()) {
        auto sys = std::find_if(msgs.begin(), msgs.end(), [](const Json &m) { return family::role(m) == "system"; });
        if (sys == msgs.end())
            sys = msgs.insert(msgs.begin(), Json{{"role", "system"}, {"content", ""}});
        (*sys)["tools"] = *t;
    }
    if (thinking) { // drop_thinking_messages
        const long last = lastUser(msgs);
        std::vector<Json> kept;
        for (long i = 0; i < long(msgs.size()); ++i) {
            Json m = msgs[size_t(i)];
            const std::string r = family::role(m);
            if (i < last && r == "assistant")
                m.erase("reasoning_content");
            else if (i < last && r == "developer")
                continue;
            kept.push_back(std::move(m));
        }
        msgs = std::move(kept);
    }
    const long last = lastUser(msgs);
    const bool generationPrompt = family::addGenerationPrompt(request);

    SegmentWriter w;
    w.markup(deepseek::kBos);
    for (size_t i = 0; i < msgs.size(); ++i) {
        const Json &m = msgs[i];
        const std::string r = family::role(m);
        if (r == "system") {
            w.text(family::contentText(m));
            if (has(m, "tools"))
                writeTools(w, m["tools"]);
            if (has(m, "response_format"))
                writeResponseFormat(w, m["response_format"]);
        } else if (r == "user" || r == "developer") {
            w.markup(deepseek::kUser);
            if (r == "developer") {
                if (has(m, "tools"))
                    writeTools(w, m["tools"]);
                if (has(m, "response_format"))
                    writeResponseFormat(w, m["response_format"]);
                w.markup("\n\n# The user's message is: ");
            }
            w.text(family::contentText(m));
            if (i + 1 < msgs.size() || generationPrompt) {
                w.markup(deepseek::kAssistant);
                w.markup(long(i) == last && thinking ? kThinkOpen : kThinkClose);
            }
        } else if (r == "tool") {
            // The k-th result of the assistant turn before this run of results.
            size_t prev = i;
            while (prev > 0 && family::role(msgs[prev - 1]) == "tool")
                --prev;
            if (prev == 0 || family::role(msgs[prev - 1]) != "assistant")
                family::bad("a tool message must follow the assistant message whose call it answers");
            const size_t order = i - prev + 1, calls = family::toolCalls(msgs[prev - 1]).size();
            if (order > calls)
                family::bad("there are more tool messages than the assistant message before them made calls");
            if (order == 1)
                w.markup("\n\n<function_results>");
            w.markup("\n<result>");
            w.text(family::contentText(m));
            w.markup("</result>");
            if (order == calls)
                w.markup("\n</function_results>\n\n" + (long(i) >= last && thinking ? kThinkOpen : kThinkClose));
        } else { // assistant
            if (thinking && long(i) > last) {
                w.text(family::stringOr(m, "reasoning_content"));
                w.markup(kThinkClose);
            }
            w.text(family::contentText(m));
            writeDsmlCalls(w, family::toolCalls(m), "function_calls");
            w.markup(deepseek::kEos);
        }
    }
    return w.take();
}

} // namespace waste::text
