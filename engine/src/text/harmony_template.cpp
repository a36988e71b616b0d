// The harmony conversation, message by message (the layout is in harmony_template.hpp).
#include "text/harmony_template.hpp"

#include "text/family_request.hpp"

#include <cctype>
#include <ctime>
#include <map>

namespace waste::text {

using family::Json;

namespace {

constexpr const char *kIdentity = "You are ChatGPT, a large language model trained by OpenAI.";
constexpr const char *kChannels = "# Valid channels: analysis, commentary, final. Channel must be included for every message.";
constexpr const char *kToolsRoute = "\nCalls to these tools must go to the commentary channel: 'functions'.";

// Specials become markup segments of their own; what lies between two specials is one
// text segment (see the header).
class HarmonyWriter {
public:
    void special(const char *s)
    {
        flush();
        m_out.push_back({s, true});
    }
    void write(const std::string &s) { m_run += s; }
    Segments take()
    {
        flush();
        return std::move(m_out);
    }

private:
    void flush()
    {
        if (!m_run.empty())
            m_out.push_back({std::move(m_run), false});
        m_run.clear();
    }
    Segments m_out;
    std::string m_run;
};

// The date as the release's strftime_now("%Y-%m-%d") writes it: local time.
std::string today()
{
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &local);
    return buf;
}

bool hasTools(const Json &request)
{
    const auto t = request.find("tools");
    return t != request.end() && t->is_array() && !t->empty();
}

// A message field read as text ("" when absent or null).
std::string textField(const Json &m, const char *key)
{
    const auto it = m.find(key);
    if (it == m.end() || it->is_null())
        return {};
    if (!it->is_string())
        family::bad(std::string("an assistant message's '") + key + "' must be a string");
    return it->get<std::string>();
}

// The reasoning an assistant message carries: the template's `thinking`, or the OpenAI
// API's `reasoning_content` that clients send back.
std::string reasoningOf(const Json &m)
{
    if (m.contains("thinking"))
        return textField(m, "thinking");
    return textField(m, "reasoning_content");
}

bool hasCalls(const Json &m) { return !family::toolCalls(m).empty(); }

// Tool names go into message headers, so they must be names, not markup or spaces.
std::string toolName(const Json &fn)
{
    const std::string name = family::stringOr(fn, "name");
    if (name.empty())
        family::bad("a tool call needs a function name");
    for (const char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
            family::bad("tool name '" + name + "' may hold only letters, digits, '_', '-' and '.'");
    return name;
}

// Arguments as JSON: the OpenAI API sends them as JSON text, which is written as that
// JSON; anything else (an object, or text that is not JSON) as Hugging Face's tojson.
std::string argumentsJson(const Json &fn)
{
    const auto it = fn.find("arguments");
    if (it == fn.end() || it->is_null())
        return "{}";
    if (it->is_string()) {
        Json parsed = Json::parse(it->get<std::string>(), nullptr, false);
        if (!parsed.is_discarded())
            return family::toJson(parsed);
    }
    return family::toJson(*it);
}

void refuseChannelTags(const std::string &s, const char *field)
{
    for (const char *tag : {"<|channel|>analysis<|message|>", "<|channel|>final<|message|>"})
        if (s.find(tag) != std::string::npos)
            family::bad(std::string("an assistant message's '") + field +
                        "' holds harmony channel tags; send the reasoning in 'thinking' (or 'reasoning_content') "
                        "and the answer in 'content'");
}

} // namespace

std::string harmonyReasoningEffort(const Json &request)
{
    const auto it = request.find("reasoning_effort");
    if (it == request.end() || it->is_null())
        return "medium";
    const std::string e = it->is_string() ? it->get<std::string>() : std::string();
    if (e == "low" || e == "medium" || e == "high")
        return e;
    if (e == "minimal" || e == "none")
        return "low"; // harmony has three levels
    family::bad("'reasoning_effort' must be low, medium or high (got " + it->dump() + ")");
}

Segments renderHarmony(const Json &request)
{
    const Json &msgs = family::messages(request);
    const bool tools = hasTools(request);
    HarmonyWriter w;

    w.special("<|start|>");
    w.write("system");
    w.special("<|message|>");
    const auto identity = request.find("model_identity");
    w.write((identity != request.end() && identity->is_string() ? identity->get<std::string>() : kIdentity) + "\n");
    w.write("Knowledge cutoff: 2024-06\nCurrent date: " + today() + "\n\n");
    w.write("Reasoning: " + harmonyReasoningEffort(request) + "\n\n");
    w.write(kChannels);
    if (tools)
        w.write(kToolsRoute);
    w.special("<|end|>");

    // A first system or developer message becomes the developer message's instructions.
    size_t first = 0;
    std::string instructions;
    if (!msgs.empty() && (family::role(msgs[0]) == "system" || family::role(msgs[0]) == "developer")) {
        instructions = family::contentText(msgs[0]);
        first = 1;
    }
    if (!instructions.empty() || tools) {
        w.special("<|start|>");
        w.write("developer");
        w.special("<|message|>");
        if (!instructions.empty())
            w.write("# Instructions\n\n" + instructions + "\n\n");
        if (tools)
            w.write("# Tools\n\n" + harmonyToolNamespace(request["tools"]));
        w.special("<|end|>");
    }

    const bool generate = family::addGenerationPrompt(request);
    std::string lastCall;                          // the latest call's function name
    std::map<std::string, std::string> callNames;  // call id -> function name
    for (size_t i = first; i < msgs.size(); ++i) {
        const Json &m = msgs[i];
        const std::string role = family::role(m);
        if (role == "assistant") {
            const std::string content = family::contentText(m);
            const std::string reasoning = reasoningOf(m);
            refuseChannelTags(content, "content");
            refuseChannelTags(reasoning, "thinking");
            if (hasCalls(m)) {
                // The reasoning before a call is kept until a later plain answer ends the turn.
                bool answeredLater = false;
                for (size_t k = i + 1; k < msgs.size(); ++k)
                    answeredLater = answeredLater || (family::role(msgs[k]) == "assistant" && !hasCalls(msgs[k]));
                if (!content.empty() && !reasoning.empty())
                    family::bad("an assistant message with tool calls has both content and reasoning; "
                                "send its analysis in one of them");
                const std::string analysis = content.empty() ? reasoning : content;
                if (!analysis.empty() && !answeredLater) {
                    w.special("<|start|>");
                    w.write("assistant");
                    w.special("<|channel|>");
                    w.write("analysis");
                    w.special("<|message|>");
                    w.write(analysis);
                    w.special("<|end|>");
                }
                for (const Json &call : family::toolCalls(m)) {
                    const Json &fn = family::function(call);
                    lastCall = toolName(fn);
                    if (const std::string id = family::stringOr(call, "id"); !id.empty())
                        callNames[id] = lastCall;
                    const std::string contentType = family::stringOr(fn, "content_type");
                    w.special("<|start|>");
                    w.write("assistant to=functions." + lastCall);
                    w.special("<|channel|>");
                    w.write("commentary " + (contentType.empty() ? std::string("json") : contentType));
                    w.special("<|message|>");
                    w.write(argumentsJson(fn));
                    w.special("<|call|>");
                }
            } else if (i + 1 == msgs.size() && !generate) {
                // A finished conversation (training): its last answer keeps its reasoning and ends with <|return|>.
                if (m.contains("thinking")) {
                    w.special("<|start|>");
                    w.write("assistant");
                    w.special("<|channel|>");
                    w.write("analysis");
                    w.special("<|message|>");
                    w.write(reasoning);
                    w.special("<|end|>");
                }
                w.special("<|start|>");
                w.write("assistant");
                w.special("<|channel|>");
                w.write("final");
                w.special("<|message|>");
                w.write(content);
                w.special("<|return|>");
            } else {
                // Earlier answers drop their reasoning.
                w.special("<|start|>");
                w.write("assistant");
                w.special("<|channel|>");
                w.write("final");
                w.special("<|message|>");
                w.write(content);
                w.special("<|end|>");
                lastCall.clear();
            }
        } else if (role == "tool") {
            std::string name = lastCall;
            if (const auto it = callNames.find(family::stringOr(m, "tool_call_id")); it != callNames.end())
                name = it->second;
            if (name.empty())
                family::bad("messages[" + std::to_string(i) +
                            "] is a tool result, but no earlier assistant message made a tool call");
            w.special("<|start|>");
            w.write("functions." + name + " to=assistant");
            w.special("<|channel|>");
            w.write("commentary");
            w.special("<|message|>");
            w.write(family::toJson(Json(family::contentText(m))));
            w.special("<|end|>");
        } else if (role == "user") {
            w.special("<|start|>");
            w.write("user");
            w.special("<|message|>");
            w.write(family::contentText(m));
            w.special("<|end|>");
        }
        // Later system or developer messages are not part of the format (the release drops them too).
    }
    if (generate) {
        w.special("<|start|>");
        w.write("assistant");
    }
    return w.take();
}

} // namespace waste::text
