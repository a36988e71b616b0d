#include "text/k3_template.hpp"

#include "text/python_json.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <optional>

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {

constexpr const char *kOpen = "<|open|>";
constexpr const char *kClose = "<|close|>";
constexpr const char *kSep = "<|sep|>";
constexpr const char *kEndOfMessage = "<|end_of_msg|>";
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

// Compact, sorted: how the encoder writes tool and schema declarations.
std::string declJson(const Json &v) { return pyJsonDumps(v, {true, false, ",", ":"}); }
// Python's json.dumps defaults (", " and ": "): how it writes object and array arguments.
std::string valueJson(const Json &v) { return pyJsonDumps(v, {false, false, ", ", ": "}); }

const std::string *stringField(const Json &obj, const char *key)
{
    if (!obj.is_object())
        return nullptr;
    const auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? &it->get_ref<const std::string &>() : nullptr;
}

struct Call {
    std::string id;
    std::string name;
    int index = 0;
    bool answered = false;
};

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
    }

    Segments render()
    {
        const bool thinking = k3ThinkingEnabled(m_req);
        const std::optional<std::string> effort = thinkingEffort();

        if (const auto it = m_req.find("tools"); it != m_req.end() && it->is_array() && !it->empty())
            toolDeclare(*it, false);
        if (thinking && effort)
            systemNote("thinking-effort", std::string(kEffortHead) + *effort + "`.");

        const auto mit = m_req.find("messages");
        if (mit == m_req.end() || !mit->is_array())
            bad("'messages' must be an array");
        const Json &messages = *mit;
        for (size_t i = 0; i < messages.size();) {
            const Json &m = messages[i];
            if (!m.is_object() || !stringField(m, "role"))
                bad("messages[" + std::to_string(i) + "] needs a string 'role'");
            const std::string &role = *stringField(m, "role");
            if (role == "tool") {
                size_t j = i;
                while (j < messages.size() && stringField(messages[j], "role") &&
                       *stringField(messages[j], "role") == "tool")
                    ++j;
                toolResults(messages, i, j);
                i = j;
                continue;
            }
            if (role == "assistant")
                assistant(m);
            else if (role == "system" && m.contains("tools"))
                dynamicTools(m);
            else
                plainMessage(m, role == "developer" ? std::string("system") : role);
            ++i;
        }

        toolChoice();
        responseFormat();
        if (m_req.value("add_generation_prompt", true)) {
            open("message", {{"role", "assistant"}});
            open(thinking ? "think" : "response", {});
        }
        return std::move(m_out);
    }

private:
    using Attrs = std::vector<std::pair<std::string, std::string>>;

    void markup(const std::string &s) { m_out.push_back({s, true}); }
    void text(const std::string &s)
    {
        if (!s.empty())
            m_out.push_back({s, false});
    }
    void open(const std::string &tag, const Attrs &attrs)
    {
        const Segments s = k3OpenSegments(tag, attrs);
        m_out.insert(m_out.end(), s.begin(), s.end());
    }
    void close(const std::string &tag)
    {
        const Segments s = k3CloseSegments(tag);
        m_out.insert(m_out.end(), s.begin(), s.end());
    }
    void endMessage()
    {
        close("message");
        markup(kEndOfMessage);
    }
    void systemNote(const std::string &type, const std::string &body)
    {
        open("message", {{"role", "system"}, {"type", type}});
        text(body);
        endMessage();
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
            text(s.substr(pos, at - pos));
            markup(m_images[m_nextImage++]);
            pos = at + ph.size();
        }
        text(s.substr(pos));
    }
    void image()
    {
        // Without a prepared media block, the engine expands the placeholder token itself.
        markup(m_nextImage < m_images.size() ? m_images[m_nextImage++] : std::string(kImagePlaceholder));
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
    Attrs roleAttrs(const Json &m, const std::string &role)
    {
        Attrs a = {{"role", role}};
        if (const std::string *name = stringField(m, "name"); name && !name->empty())
            a.emplace_back("name", *name);
        return a;
    }

    void plainMessage(const Json &m, const std::string &role)
    {
        open("message", roleAttrs(m, role));
        if (const auto it = m.find("content"); it != m.end())
            content(*it);
        endMessage();
    }

    void toolDeclare(const Json &tools, bool lazy)
    {
        if (!tools.is_array())
            bad("'tools' must be an array");
        systemNote("tool-declare", std::string(lazy ? kToolDeclareLazyHead : kToolDeclareHead) + declJson(tools) +
                                       kCodeEnd);
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

    void arguments(const Json &args)
    {
        Json parsed;
        std::string raw;
        if (args.is_object()) {
            parsed = args;
        } else if (args.is_string()) {
            raw = args.get<std::string>();
            if (raw.empty())
                return;
            try {
                parsed = Json::parse(raw);
            } catch (const Json::exception &) {
                parsed = nullptr;
            }
        } else if (args.is_null()) {
            return;
        } else {
            raw = valueJson(args);
        }
        if (!parsed.is_object()) {
            // Arguments that are not a JSON object travel verbatim.
            open("argument", {{"type", "json"}});
            text(raw);
            close("argument");
            return;
        }
        for (auto it = parsed.begin(); it != parsed.end(); ++it) {
            const Json &v = it.value();
            std::string type, body;
            if (v.is_string()) {
                type = "string";
                body = v.get<std::string>();
            } else if (v.is_boolean()) {
                type = "boolean";
                body = v.get<bool>() ? "true" : "false";
            } else if (v.is_null()) {
                type = "null";
                body = "null";
            } else if (v.is_number()) {
                type = "number";
                body = valueJson(v);
            } else if (v.is_object()) {
                type = "object";
                body = valueJson(v);
            } else {
                type = "array";
                body = valueJson(v);
            }
            open("argument", {{"key", it.key()}, {"type", type}});
            text(body);
            close("argument");
        }
    }

    void assistant(const Json &m)
    {
        m_calls.clear();
        open("message", roleAttrs(m, "assistant"));
        open("think", {});
        if (const std::string *r = stringField(m, "reasoning_content"))
            text(*r);
        else if (const std::string *r2 = stringField(m, "reasoning"))
            text(*r2);
        close("think");
        open("response", {});
        if (const auto it = m.find("content"); it != m.end())
            content(*it);
        close("response");
        const auto tc = m.find("tool_calls");
        if (tc != m.end() && tc->is_array() && !tc->empty()) {
            open("tools", {});
            int index = 0;
            for (const Json &call : *tc) {
                const Json &fn = call.contains("function") ? call.at("function") : call;
                Call c;
                c.index = ++index;
                if (const std::string *id = stringField(call, "id"))
                    c.id = *id;
                if (const std::string *name = stringField(fn, "name"))
                    c.name = *name;
                open("call", {{"tool", c.name}, {"index", std::to_string(c.index)}});
                if (fn.is_object() && fn.contains("arguments"))
                    arguments(fn.at("arguments"));
                close("call");
                m_calls.push_back(c);
            }
            close("tools");
        }
        endMessage();
    }

    // A run of tool results: each is tied to the call it answers (by id, else the
    // earliest unanswered call) and the run is written in call order.
    void toolResults(const Json &messages, size_t begin, size_t end)
    {
        struct Result {
            const Json *msg;
            std::string name;
            int index;
            size_t order;
        };
        std::vector<Result> results;
        std::vector<const Json *> unmatched;
        std::vector<size_t> unmatchedOrder;
        for (size_t i = begin; i < end; ++i) {
            const Json &m = messages[i];
            const std::string *id = stringField(m, "tool_call_id");
            auto call = std::find_if(m_calls.begin(), m_calls.end(),
                                     [&](const Call &c) { return id && !c.answered && !c.id.empty() && c.id == *id; });
            if (call != m_calls.end()) {
                call->answered = true;
                results.push_back({&m, call->name, call->index, i});
            } else {
                unmatched.push_back(&m);
                unmatchedOrder.push_back(i);
            }
        }
        int nextIndex = static_cast<int>(m_calls.size());
        for (size_t k = 0; k < unmatched.size(); ++k) {
            const Json &m = *unmatched[k];
            auto call = std::find_if(m_calls.begin(), m_calls.end(), [](const Call &c) { return !c.answered; });
            if (call != m_calls.end()) {
                call->answered = true;
                results.push_back({&m, call->name, call->index, unmatchedOrder[k]});
            } else {
                std::string name;
                if (const std::string *t = stringField(m, "tool"))
                    name = *t;
                else if (const std::string *n = stringField(m, "name"))
                    name = *n;
                results.push_back({&m, name, ++nextIndex, unmatchedOrder[k]});
            }
        }
        std::stable_sort(results.begin(), results.end(),
                         [](const Result &a, const Result &b) { return a.index < b.index; });
        for (const Result &r : results) {
            Attrs attrs = {{"role", "tool"}};
            if (!r.name.empty())
                attrs.emplace_back("tool", r.name);
            attrs.emplace_back("index", std::to_string(r.index));
            open("message", attrs);
            if (const auto it = r.msg->find("content"); it != r.msg->end())
                content(*it);
            endMessage();
        }
    }

    std::optional<std::string> thinkingEffort() const
    {
        const std::string *e = stringField(m_req, "thinking_effort");
        if (!e)
            e = stringField(m_req, "reasoning_effort");
        if (!e)
            return std::nullopt;
        if (*e == "none" || *e == "minimal" || *e == "off")
            return std::nullopt;
        if (*e == "low" || *e == "high" || *e == "max")
            return *e;
        bad("thinking effort '" + *e + "' is not supported by K3 (use low, high or max)");
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
            const auto js = it->find("json_schema");
            if (js != it->end() && js->is_object() && js->contains("schema"))
                body += "\nThe JSON data must match the following schema:\n```json\n" + declJson(js->at("schema")) +
                        kCodeEnd;
            systemNote("response-format", body);
        } else {
            bad("'response_format' type '" + *type + "' is not one of text, json_object, json_schema");
        }
    }

    const Json &m_req;
    Segments m_out;
    std::vector<std::string> m_images;
    size_t m_nextImage = 0;
    std::vector<Call> m_calls; // the calls of the latest assistant message
};

} // namespace

Segments k3OpenSegments(const std::string &tag, const std::vector<std::pair<std::string, std::string>> &attrs)
{
    Segments out;
    auto text = [&](const std::string &t) {
        if (!t.empty())
            out.push_back({t, false});
    };
    out.push_back({kOpen, true});
    text(tag);
    for (const auto &[k, v] : attrs) {
        text(" " + k);
        text("=\"");
        text(v);
        text("\"");
    }
    out.push_back({kSep, true});
    return out;
}

Segments k3CloseSegments(const std::string &tag)
{
    Segments out{{kClose, true}};
    if (!tag.empty())
        out.push_back({tag, false});
    out.push_back({kSep, true});
    return out;
}

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
