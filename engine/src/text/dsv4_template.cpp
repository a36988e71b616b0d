// DeepSeek V4's prompt encoding (docs/architectures/deepseek-v4-flash.md, "Prompt encoding"):
// the release encodes in Python (encoding_dsv4.py's encode_messages), not Jinja. From an
// OpenAI-style request: tool messages merged into user messages as <tool_result> blocks (in
// the order of the calls that asked for them), BOS, each message rendered by role (system
// raw; user and developer after <｜User｜>; latest_reminder after its marker; assistant as
// reasoning</think>, content, the DSML calls block and EOS), and after the last user turn
// <｜Assistant｜> then <think> (thinking) or </think> (chat). Thinking drops earlier turns'
// reasoning unless any message declares tools. The request's `tools` go to the first system
// message (one with empty content is put first when there is none): the encoder reads tools
// from a system or developer message, and where an API puts them is the API's choice.
#include "text/deepseek_markers.hpp"
#include "text/dsml_call.hpp"
#include "text/family_request.hpp"
#include "text/family_templates.hpp"
#include "text/segment_writer.hpp"

#include <algorithm>
#include <map>

namespace waste::text {

using family::Json;

namespace {

const std::string kThinkOpen = "<think>", kThinkClose = "</think>";

const char *kReasoningEffortMax =
    "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
    "You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root cause, "
    "rigorously stress-testing your logic against all potential paths, edge cases, and adversarial scenarios.\n"
    "Explicitly write out your entire deliberation process, documenting every intermediate step, considered "
    "alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.\n\n";

std::string toolsHead()
{
    const std::string d = deepseek::kDsml;
    return "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by "
           "writing a \"<" + d + "tool_calls>\" block like the following:\n\n<" + d + "tool_calls>\n<" + d +
           "invoke name=\"$TOOL_NAME\">\n<" + d +
           "parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</" + d + "parameter>\n...\n</" + d +
           "invoke>\n<" + d + "invoke name=\"$TOOL_NAME2\">\n...\n</" + d + "invoke>\n</" + d +
           "tool_calls>\n\nString parameters should be specified as is and set `string=\"true\"`. For all other types "
           "(numbers, booleans, arrays, objects), pass the value in JSON format and set `string=\"false\"`.\n\nIf "
           "thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside "
           "<think>...</think> BEFORE any tool calls or final response.\n\nOtherwise, output directly after </think> "
           "with tool calls or final response.\n\n### Available Tool Schemas\n\n";
}
const char *kToolsTail = "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n";

// The tools block: the fixed text as markup, the schemas (one JSON line each) as text.
void writeTools(SegmentWriter &w, const Json &tools)
{
    w.markup(toolsHead());
    for (size_t i = 0; i < tools.size(); ++i) {
        if (i > 0)
            w.markup("\n");
        const Json &t = tools[i];
        w.text(family::toJson(t.contains("function") ? t["function"] : t));
    }
    w.markup(kToolsTail);
}

// A user message after merge_tool_messages: text and tool_result blocks.
struct Block {
    bool toolResult = false;
    std::string text, id;
};
struct Msg {
    std::string role;
    Json src;                 // the message as sent (assistant, system, developer, latest_reminder)
    std::vector<Block> blocks; // user messages
    bool tools = false;       // declares the request's tools (the first system message)
};

std::string toolResultText(const Json &m)
{
    const auto c = m.find("content");
    if (c == m.end() || c->is_null())
        return "";
    if (c->is_string())
        return c->get<std::string>();
    if (!c->is_array())
        return family::toJson(*c);
    std::string out;
    for (size_t i = 0; i < c->size(); ++i) {
        const Json &b = (*c)[i];
        const std::string type = family::stringOr(b, "type");
        out += (i ? "\n\n" : "") + (type == "text" ? family::stringOr(b, "text") : "[Unsupported " + type + "]");
    }
    return out;
}

// merge_tool_messages and sort_tool_results_by_call_order.
std::vector<Msg> preprocess(const Json &msgs, bool requestTools)
{
    std::vector<Msg> out;
    for (const Json &m : msgs) {
        const std::string role = family::role(m);
        if (role == "tool") {
            Block b{true, toolResultText(m), family::stringOr(m, "tool_call_id")};
            if (!out.empty() && out.back().role == "user")
                out.back().blocks.push_back(std::move(b));
            else
                out.push_back({"user", Json(), {std::move(b)}});
        } else if (role == "user") {
            Block b{false, family::contentText(m), {}};
            if (!out.empty() && out.back().role == "user")
                out.back().blocks.push_back(std::move(b));
            else
                out.push_back({"user", Json(), {std::move(b)}});
        } else if (role == "system" || role == "assistant" || role == "developer" || role == "latest_reminder") {
            out.push_back({role, m, {}});
        } else {
            family::bad("role '" + role + "' is not one DeepSeek V4's encoder writes");
        }
    }
    if (requestTools) {
        auto sys = std::find_if(out.begin(), out.end(), [](const Msg &x) { return x.role == "system"; });
        if (sys == out.end())
            sys = out.insert(out.begin(), Msg{"system", Json{{"role", "system"}, {"content", ""}}, {}});
        sys->tools = true;
    }
    std::map<std::string, size_t> order;
    for (Msg &m : out) {
        if (m.role == "assistant" && !family::toolCalls(m.src).empty()) {
            order.clear();
            size_t i = 0;
            for (const Json &call : family::toolCalls(m.src)) {
                const std::string id = family::stringOr(call, "id");
                if (!id.empty())
                    order[id] = i;
                ++i;
            }
        } else if (m.role == "user" && !order.empty()) {
            std::vector<Block> results;
            for (const Block &b : m.blocks)
                if (b.toolResult)
                    results.push_back(b);
            if (results.size() < 2)
                continue;
            const auto key = [&](const Block &b) { const auto it = order.find(b.id); return it == order.end() ? size_t(0) : it->second; };
            std::stable_sort(results.begin(), results.end(), [&](const Block &a, const Block &b) { return key(a) < key(b); });
            size_t k = 0;
            for (Block &b : m.blocks)
                if (b.toolResult)
                    b = results[k++];
        }
    }
    return out;
}

} // namespace

Segments renderDeepSeekV4(const Json &request)
{
    const Json &src = family::messages(request);
    const bool thinking = familyThinkingEnabled(request);
    const std::string effort = family::stringOr(request, "reasoning_effort");
    const auto t = request.find("tools");
    const bool requestTools = t != request.end() && t->is_array() && !t->empty();
    std::vector<Msg> msgs = preprocess(src, requestTools);
    bool anyTools = requestTools;
    for (const Msg &m : msgs)
        anyTools = anyTools || (m.src.is_object() && m.src.contains("tools") && !m.src["tools"].empty());
    const bool drop = !anyTools; // tools keep every turn's reasoning
    const auto lastUser = [](const std::vector<Msg> &ms) {
        for (size_t i = ms.size(); i-- > 0;)
            if (ms[i].role == "user" || ms[i].role == "developer")
                return long(i);
        return -1L;
    };
    if (thinking && drop) { // _drop_thinking_messages
        const long last = lastUser(msgs);
        std::vector<Msg> kept;
        for (long i = 0; i < long(msgs.size()); ++i) {
            Msg m = msgs[size_t(i)];
            if (i < last && m.role == "assistant")
                m.src.erase("reasoning_content");
            else if (i < last && m.role == "developer")
                continue;
            kept.push_back(std::move(m));
        }
        msgs = std::move(kept);
    }
    const long last = lastUser(msgs);

    SegmentWriter w;
    w.markup(deepseek::kBos);
    for (size_t i = 0; i < msgs.size(); ++i) {
        const Msg &m = msgs[i];
        if (i == 0 && thinking && effort == "max")
            w.markup(kReasoningEffortMax);
        if (m.role == "system") {
            w.text(family::contentText(m.src));
            if (m.tools) {
                w.markup("\n\n");
                writeTools(w, *t);
            }
        } else if (m.role == "developer") {
            w.markup(deepseek::kUser);
            w.text(family::contentText(m.src));
        } else if (m.role == "latest_reminder") {
            w.markup(deepseek::kLatestReminder);
            w.text(family::contentText(m.src));
        } else if (m.role == "user") {
            w.markup(deepseek::kUser);
            for (size_t k = 0; k < m.blocks.size(); ++k) {
                if (k > 0)
                    w.markup("\n\n");
                const Block &b = m.blocks[k];
                if (b.toolResult) {
                    w.markup("<tool_result>");
                    w.text(b.text);
                    w.markup("</tool_result>");
                } else {
                    w.text(b.text);
                }
            }
        } else { // assistant
            if (thinking && (!drop || long(i) > last)) {
                w.text(family::stringOr(m.src, "reasoning_content"));
                w.markup(kThinkClose);
            }
            w.text(family::contentText(m.src));
            writeDsmlCalls(w, family::toolCalls(m.src), "tool_calls");
            w.markup(deepseek::kEos);
        }
        const bool handsOver = i + 1 == msgs.size() || msgs[i + 1].role == "assistant" || msgs[i + 1].role == "latest_reminder";
        if (handsOver && (m.role == "user" || m.role == "developer")) {
            w.markup(deepseek::kAssistant);
            w.markup(thinking && (!drop || long(i) >= last) ? kThinkOpen : kThinkClose);
        }
    }
    return w.take();
}

} // namespace waste::text
