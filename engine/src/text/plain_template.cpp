#include "text/plain_template.hpp"

#include "text/json_text.hpp"

#include "waste/waste.hpp"

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {

// Compact JSON with its keys sorted: the tool declarations and calls a transcript shows
// read the same whatever order a client wrote them in.
std::string sortedCompact(const Json &v) { return compactJsonText(nlohmann::json(v)); }

void appendText(Segments &out, const std::string &text)
{
    if (!text.empty())
        out.push_back({text, false});
}

// "You can call these tools: ..." with the call syntax; empty when the request offers none
// (no tools, or tool_choice "none").
std::string toolInstructions(const Json &req)
{
    const auto tools = req.find("tools");
    if (tools == req.end() || !tools->is_array() || tools->empty())
        return {};
    const Json choice = req.value("tool_choice", Json("auto"));
    if (choice.is_string() && choice.get<std::string>() == "none")
        return {};
    std::string s = "You can call these tools:\n";
    for (const Json &t : *tools) {
        const Json fn = t.is_object() && t.contains("function") ? t.at("function") : t;
        s += sortedCompact(fn) + "\n";
    }
    s += "To call a tool, reply with only <tool_call>{\"name\": \"...\", \"arguments\": {...}}</tool_call>.";
    if (choice.is_string() && choice.get<std::string>() == "required") {
        s += " You must call a tool now.";
    } else if (choice.is_object()) {
        const Json fn = choice.value("function", Json::object());
        const std::string name = fn.is_object() ? fn.value("name", choice.value("name", "")) : "";
        if (!name.empty())
            s += " You must call " + name + " now.";
    }
    return s;
}

void appendContent(Segments &out, const Json &content)
{
    if (content.is_string()) {
        appendText(out, content.get<std::string>());
        return;
    }
    if (!content.is_array())
        return;
    for (const Json &p : content) {
        const std::string type = p.is_object() ? p.value("type", "") : "";
        if ((type == "text" || type == "input_text") && p.contains("text") && p.at("text").is_string())
            appendText(out, p.at("text").get<std::string>());
        else if (type == "image_url" || type == "image" || type == "input_image")
            out.push_back({kImagePlaceholder, true});
    }
}

// An assistant's earlier call (OpenAI's form), written back as text.
std::string callText(const Json &call)
{
    const Json &fn = call.is_object() && call.contains("function") ? call.at("function") : call;
    return toolCallText(fn.is_object() ? fn.value("name", "") : "",
                        fn.is_object() ? fn.value("arguments", Json::object()) : Json::object());
}

} // namespace

std::string toolCallJson(const std::string &name, const Json &arguments)
{
    Json args = arguments;
    if (args.is_string()) {
        try {
            Json parsed = Json::parse(args.get<std::string>());
            if (parsed.is_object())
                args = std::move(parsed);
        } catch (const Json::exception &) {
        }
    }
    return sortedCompact(Json{{"name", name}, {"arguments", args}});
}

std::string toolCallText(const std::string &name, const Json &arguments)
{
    return "<tool_call>" + toolCallJson(name, arguments) + "</tool_call>";
}

Segments renderPlain(const Json &req)
{
    if (!req.is_object() || !req.contains("messages") || !req.at("messages").is_array())
        throw Error(ErrorCode::Argument, "chat request: 'messages' must be an array");
    Segments out;
    if (const std::string tools = toolInstructions(req); !tools.empty())
        appendText(out, "system: " + tools + "\n\n");
    for (const Json &m : req.at("messages")) {
        std::string role = m.is_object() ? m.value("role", "") : "";
        if (role.empty())
            throw Error(ErrorCode::Argument, "chat request: every message needs a 'role'");
        if (role == "tool" && m.contains("tool_call_id") && m.at("tool_call_id").is_string() &&
            !m.at("tool_call_id").get<std::string>().empty())
            role += " (" + m.at("tool_call_id").get<std::string>() + ")";
        appendText(out, role + ": ");
        if (m.contains("content"))
            appendContent(out, m.at("content"));
        if (const auto calls = m.find("tool_calls"); calls != m.end() && calls->is_array())
            for (const Json &call : *calls)
                appendText(out, callText(call));
        appendText(out, "\n\n");
    }
    if (req.value("add_generation_prompt", true))
        appendText(out, "assistant: ");
    return out;
}

} // namespace waste::text
