#include "text/chatml_template.hpp"

#include "text/python_json.hpp"
#include "text/tagged_reply_parser.hpp"
#include "waste/waste.hpp"

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {

constexpr const char *kStart = "<|im_start|>";
constexpr const char *kEnd = "<|im_end|>";

std::string compact(const Json &v) { return pyJsonDumps(v, {false, false, ", ", ": "}); }

class ChatMlRenderer {
public:
    explicit ChatMlRenderer(const Json &req) : m_req(req) {}

    Segments render()
    {
        if (!m_req.is_object() || !m_req.contains("messages") || !m_req.at("messages").is_array())
            throw Error(ErrorCode::Argument, "chat request: 'messages' must be an array");
        std::string system;
        if (const auto t = m_req.find("tools"); t != m_req.end() && t->is_array() && !t->empty()) {
            system = "You can call these tools. To call one, reply with "
                     "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>.\n<tools>\n";
            for (const Json &tool : *t)
                system += compact(tool) + "\n";
            system += "</tools>";
        }
        if (const auto rf = m_req.find("response_format"); rf != m_req.end() && rf->is_object()) {
            const std::string type = rf->value("type", "text");
            if (type == "json_object" || type == "json_schema") {
                if (!system.empty())
                    system += "\n\n";
                system += "Reply with raw JSON only.";
                const auto js = rf->find("json_schema");
                if (js != rf->end() && js->is_object() && js->contains("schema"))
                    system += " It must match this JSON schema: " + compact(js->at("schema"));
            }
        }
        if (!system.empty())
            message("system", {{"", system}});
        for (const Json &m : m_req.at("messages")) {
            const std::string role = m.is_object() ? m.value("role", "") : "";
            if (role.empty())
                throw Error(ErrorCode::Argument, "chat request: every message needs a 'role'");
            std::vector<std::pair<std::string, std::string>> parts; // (markup, text)
            if (role == "tool")
                parts.push_back({"", "<tool_response>\n"});
            collect(m.contains("content") ? m.at("content") : Json(), parts);
            if (role == "tool")
                parts.push_back({"", "\n</tool_response>"});
            if (role == "assistant" && m.contains("tool_calls") && m.at("tool_calls").is_array()) {
                for (const Json &call : m.at("tool_calls")) {
                    const Json &fn = call.contains("function") ? call.at("function") : call;
                    Json args = fn.value("arguments", Json::object());
                    if (args.is_string()) {
                        try {
                            args = Json::parse(args.get<std::string>());
                        } catch (const Json::exception &) {
                        }
                    }
                    Json obj = {{"name", fn.value("name", "")}, {"arguments", args}};
                    parts.push_back({"", "\n<tool_call>\n" + compact(obj) + "\n</tool_call>"});
                }
            }
            message(role == "developer" ? "system" : role, parts);
        }
        if (m_req.value("add_generation_prompt", true)) {
            m_out.push_back({kStart, true});
            m_out.push_back({"assistant\n", true});
        }
        return std::move(m_out);
    }

private:
    void collect(const Json &c, std::vector<std::pair<std::string, std::string>> &parts)
    {
        if (c.is_string()) {
            parts.push_back({"", c.get<std::string>()});
        } else if (c.is_array()) {
            for (const Json &p : c) {
                const std::string type = p.is_object() ? p.value("type", "") : "";
                if (type == "text" && p.contains("text") && p.at("text").is_string())
                    parts.push_back({"", p.at("text").get<std::string>()});
                else if (type == "image_url" || type == "image" || type == "input_image")
                    parts.push_back({"<|kimi_image_placeholder|>", ""});
            }
        }
    }
    void message(const std::string &role, const std::vector<std::pair<std::string, std::string>> &parts)
    {
        m_out.push_back({kStart, true});
        m_out.push_back({role + "\n", true});
        for (const auto &[markup, text] : parts) {
            if (!markup.empty())
                m_out.push_back({markup, true});
            if (!text.empty())
                m_out.push_back({text, false});
        }
        m_out.push_back({kEnd, true});
        m_out.push_back({"\n", true});
    }

    const Json &m_req;
    Segments m_out;
};

} // namespace

Segments renderChatMl(const Json &request) { return ChatMlRenderer(request).render(); }

ChatReply parseChatMlReply(std::string_view text)
{
    TaggedReplyParser parser(false);
    parser.push(text);
    parser.finish();
    return parser.reply();
}

} // namespace waste::text
