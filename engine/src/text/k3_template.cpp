#include "text/k3_template.hpp"

#include "text/json_field.hpp"
#include "text/k3_arguments.hpp"
#include "text/k3_elements.hpp"
#include "text/k3_tool_results.hpp"
#include "text/python_json.hpp"
#include "waste/waste.hpp"

#include <optional>

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {

constexpr const char *kImagePlaceholder = "<|kimi_image_placeholder|>";

// The encoder's fixed texts.
constexpr const char *kToolDeclareHead = "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n";
constexpr const char *kToolDeclareLazyHead =
    "## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\n"
    "You have access to all existing and extended tools.\nHere are the specs for the extended tools.\n\n```json\n";
constexpr const char *kCodeEnd = "\n```";
constexpr const char *kJsonOnly =
    "Your response must be raw JSON data without markdown code blocks (```json) or any additional formatting.";
constexpr const char *kEffortHead =
    "`thinking_effort` guides on how much to think in your thinking channel (not including the response "
    "channel), supported values include `low`, `medium`, `high`, and `max`.\nNow the system is invoked with "
    "`thinking_effort=";

[[noreturn]] void bad(const std::string &what) { throw Error(ErrorCode::Argument, "chat request: " + what); }

// Compact, keys sorted recursively (arrays keep their order), non-ASCII kept: how the
// encoder writes tool and schema declarations.
std::string declJson(const Json &v) { return pyJsonDumps(v, {true, false, ",", ":"}); }

const std::string *nonEmptyField(const Json &obj, const char *key)
{
    const std::string *s = stringField(obj, key);
    return s && !s->empty() ? s : nullptr;
}

// Where a json_schema response format keeps its schema: clients send all three shapes.
const Json *responseSchema(const Json &format)
{
    const auto js = format.find("json_schema");
    if (js == format.end() || !js->is_object())
        return nullptr;
    for (const char *key : {"schema", "json_schema"})
        if (const auto it = js->find(key); it != js->end())
            return &*it;
    return &*js;
}

class Renderer {
public:
    explicit Renderer(const Json &request) : m_req(request)
    {
        if (!request.is_object())
            bad("the request must be a JSON object");
        if (const auto it = request.find("image_prompts"); it != request.end() && it->is_array())
            for (const Json &p : *it)
                if (p.is_string())
                    m_images.push_back(p.get<std::string>());
        m_thinking = k3ThinkingEnabled(request);
    }

    // The request's parts in the encoder's order.
    Segments render()
    {
        if (const auto it = m_req.find("tools"); it != m_req.end() && it->is_array() && !it->empty())
            toolDeclare(*it, false);
        if (m_thinking)
            if (const std::optional<std::string> effort = thinkingEffort())
                systemNote("thinking-effort", std::string(kEffortHead) + *effort + "`.");

        const auto mit = m_req.find("messages");
        if (mit == m_req.end() || !mit->is_array())
            bad("'messages' must be an array");
        for (const K3OrderedMessage &om : k3OrderToolResults(*mit))
            message(om);

        toolChoice();
        responseFormat();
        if (m_req.value("add_generation_prompt", true)) {
            m_w.open("message", {{"role", "assistant"}});
            m_w.open(m_thinking ? "think" : "response");
        }
        return m_w.take();
    }

private:
    static std::string where(size_t index) { return "messages[" + std::to_string(index) + "]"; }

    void message(const K3OrderedMessage &om)
    {
        const Json &m = *om.message;
        const std::string *role = stringField(m, "role");
        if (!role)
            bad(where(om.index) + " needs a string 'role'");
        if (*role == "tool")
            toolResult(om);
        else if (*role == "assistant")
            assistant(m, om.index);
        else if (*role == "system" && carriesTools(m, om.index))
            dynamicTools(m);
        else
            plainMessage(m, *role == "developer" ? std::string("system") : *role);
    }

    // Synthesised messages. Their fixed bodies have no surrounding whitespace, which the
    // encoder strips.
    void systemNote(const std::string &type, const std::string &body)
    {
        m_w.open("message", {{"role", "system"}, {"type", type}});
        m_w.text(body);
        m_w.endMessage();
    }

    // Text with image placeholders resolved to the next media block while any remain;
    // beyond that the placeholder stays ordinary text.
    void userText(const std::string &s)
    {
        const std::string ph = kImagePlaceholder;
        size_t pos = 0;
        while (m_nextImage < m_images.size()) {
            const size_t at = s.find(ph, pos);
            if (at == std::string::npos)
                break;
            m_w.text(s.substr(pos, at - pos));
            m_w.markup(m_images[m_nextImage++]);
            pos = at + ph.size();
        }
        m_w.text(s.substr(pos));
    }
    void image()
    {
        // Without a prepared media block, the engine expands the placeholder token itself.
        m_w.markup(m_nextImage < m_images.size() ? m_images[m_nextImage++] : std::string(kImagePlaceholder));
    }
    void content(const Json &c)
    {
        if (c.is_string()) {
            userText(c.get<std::string>());
        } else if (c.is_array()) {
            for (const Json &part : c) {
                const std::string *type = stringField(part, "type");
                if (!type)
                    continue;
                if (*type == "text" || *type == "input_text") {
                    if (const std::string *t = stringField(part, "text"))
                        userText(*t);
                } else if (*type == "image_url" || *type == "image" || *type == "input_image") {
                    image();
                }
            }
        } else if (!c.is_null()) {
            bad("message content must be a string, an array of parts or null");
        }
    }
    void messageContent(const Json &m)
    {
        if (const auto it = m.find("content"); it != m.end())
            content(*it);
    }
    K3Attrs roleAttrs(const Json &m, const std::string &role)
    {
        K3Attrs a = {{"role", role}};
        if (const std::string *name = nonEmptyField(m, "name"))
            a.emplace_back("name", *name);
        return a;
    }

    void plainMessage(const Json &m, const std::string &role)
    {
        m_w.open("message", roleAttrs(m, role));
        messageContent(m);
        m_w.endMessage();
    }

    void toolDeclare(const Json &tools, bool lazy)
    {
        systemNote("tool-declare", std::string(lazy ? kToolDeclareLazyHead : kToolDeclareHead) + declJson(tools) +
                                       kCodeEnd);
    }

    // A system message whose `tools` is a non-empty list declares tools mid-conversation.
    static bool carriesTools(const Json &m, size_t index)
    {
        const auto it = m.find("tools");
        if (it == m.end() || it->is_null())
            return false;
        if (!it->is_array())
            bad(where(index) + ".tools must be an array");
        return !it->empty();
    }
    void dynamicTools(const Json &m)
    {
        const Json *c = m.contains("content") ? &m.at("content") : nullptr;
        const bool hasText = c && ((c->is_string() && !c->get_ref<const std::string &>().empty()) ||
                                   (c->is_array() && !c->empty()));
        if (hasText)
            plainMessage(m, "system");
        toolDeclare(m.at("tools"), true);
    }

    void arguments(const K3Call &call, const std::string &callWhere)
    {
        if (!call.arguments)
            return;
        const K3Arguments args = k3Arguments(*call.arguments, callWhere + ".arguments");
        if (args.raw) {
            m_w.open("json", {{"type", "object"}});
            m_w.text(*args.raw);
            m_w.close("json");
        }
        for (const K3Argument &a : args.typed) {
            m_w.open("argument", {{"key", a.key}, {"type", a.type}});
            m_w.text(a.body);
            m_w.close("argument");
        }
    }

    void assistant(const Json &m, size_t index)
    {
        m_calls = k3ToolCalls(m);
        m_toolResults = 0;
        m_w.open("message", roleAttrs(m, "assistant"));
        if (m_thinking) { // with thinking off the think element is absent, not empty
            m_w.open("think");
            if (const std::string *r = stringField(m, "reasoning_content"))
                m_w.text(*r);
            else if (const std::string *r2 = stringField(m, "reasoning"))
                m_w.text(*r2);
            m_w.close("think");
        }
        m_w.open("response");
        messageContent(m);
        m_w.close("response");
        if (!m_calls.empty()) {
            m_w.open("tools");
            for (size_t i = 0; i < m_calls.size(); ++i) {
                m_w.open("call", {{"tool", m_calls[i].name}, {"index", std::to_string(i + 1)}});
                arguments(m_calls[i], where(index) + ".tool_calls[" + std::to_string(i) + "]");
                m_w.close("call");
            }
            m_w.close("tools");
        }
        m_w.endMessage();
    }

    // Its index counts tool results since the last assistant message; its name is the
    // answered call's, else its own `tool`, else its `name`, else that of the call at its index.
    void toolResult(const K3OrderedMessage &om)
    {
        const Json &m = *om.message;
        const size_t n = ++m_toolResults;
        std::string name = om.callName;
        if (name.empty()) {
            if (const std::string *t = nonEmptyField(m, "tool"))
                name = *t;
            else if (const std::string *nm = nonEmptyField(m, "name"))
                name = *nm;
            else if (n <= m_calls.size())
                name = m_calls[n - 1].name;
        }
        if (name.empty())
            bad(where(om.index) + " is tool result " + std::to_string(n) +
                " but names no tool: give it 'tool' or 'name', or a 'tool_call_id' of the assistant's calls before it");
        m_w.open("message", {{"role", "tool"}, {"tool", name}, {"index", std::to_string(n)}});
        messageContent(m);
        m_w.endMessage();
    }

    // Only with thinking on. `reasoning_effort` is the OpenAI spelling; none, minimal and
    // off switch thinking off instead (k3ThinkingEnabled).
    std::optional<std::string> thinkingEffort() const
    {
        for (const char *key : {"thinking_effort", "reasoning_effort"}) {
            const auto it = m_req.find(key);
            if (it == m_req.end() || it->is_null())
                continue;
            if (it->is_string() && (*it == "low" || *it == "high" || *it == "max"))
                return it->get<std::string>();
            bad(std::string("'") + key + "' must be low, high or max for K3, not " + it->dump());
        }
        return std::nullopt;
    }

    void toolChoice()
    {
        const auto it = m_req.find("tool_choice");
        if (it == m_req.end() || it->is_null())
            return;
        std::string mode;
        if (it->is_string())
            mode = it->get<std::string>();
        else if (it->is_object())
            mode = "required"; // a named function: the caller constrains which one
        else
            bad("'tool_choice' must be a string or an object");
        if (mode == "required")
            systemNote("tool-choice",
                       "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message.");
        else if (mode == "none")
            systemNote("tool-choice", "The system is invoked with `tool_choice=none`.\n"
                                      "You MUST NOT call any tools in the next message.");
        else if (mode != "auto")
            bad("'tool_choice' must be auto, none, required or a function");
    }

    void responseFormat()
    {
        const auto it = m_req.find("response_format");
        if (it == m_req.end() || it->is_null())
            return;
        const std::string *type = stringField(*it, "type");
        if (!type)
            bad("'response_format' needs a 'type'");
        if (*type == "text")
            return;
        if (*type == "json_object") {
            systemNote("response-format",
                       std::string("The system is invoked with `response_format=json_object`.\n") + kJsonOnly);
        } else if (*type == "json_schema") {
            std::string body = std::string("The system is invoked with `response_format=json_schema`.\n") + kJsonOnly;
            if (const Json *schema = responseSchema(*it))
                body += "\nThe JSON data must match the following schema:\n```json\n" + declJson(*schema) + kCodeEnd;
            systemNote("response-format", body);
        } else {
            bad("'response_format' type '" + *type + "' is not one of text, json_object, json_schema");
        }
    }

    const Json &m_req;
    bool m_thinking = true;
    K3Writer m_w;
    std::vector<std::string> m_images;
    size_t m_nextImage = 0;
    std::vector<K3Call> m_calls; // the calls of the latest assistant message
    size_t m_toolResults = 0;    // tool results since that message
};

} // namespace

bool k3ThinkingEnabled(const Json &request)
{
    bool thinking = true;
    if (const auto it = request.find("thinking"); it != request.end()) {
        if (it->is_boolean())
            thinking = it->get<bool>();
        else if (const std::string *type = stringField(*it, "type"))
            thinking = *type != "disabled";
    }
    for (const char *key : {"thinking_effort", "reasoning_effort"}) {
        if (const std::string *e = stringField(request, key); e && (*e == "none" || *e == "minimal" || *e == "off"))
            thinking = false;
    }
    return thinking;
}

Segments renderK3(const Json &request) { return Renderer(request).render(); }

Segments renderK3Json(std::string_view requestJson)
{
    Json request;
    try {
        request = Json::parse(requestJson);
    } catch (const Json::exception &e) {
        bad(std::string("not valid JSON: ") + e.what());
    }
    return renderK3(request);
}

} // namespace waste::text
