#include "text/family_request.hpp"

#include "text/python_json.hpp"
#include "waste/waste.hpp"

namespace waste::text::family {

void bad(const std::string &what) { throw Error(ErrorCode::Argument, "chat request: " + what); }

const Json &messages(const Json &request)
{
    if (!request.is_object())
        bad("the request must be a JSON object");
    const auto it = request.find("messages");
    if (it == request.end() || !it->is_array())
        bad("'messages' must be an array");
    for (size_t i = 0; i < it->size(); ++i)
        if (!(*it)[i].is_object() || !(*it)[i].contains("role") || !(*it)[i]["role"].is_string())
            bad("messages[" + std::to_string(i) + "] needs a string 'role'");
    return *it;
}

std::string role(const Json &message) { return message["role"].get<std::string>(); }

std::string contentText(const Json &message)
{
    const auto it = message.find("content");
    if (it == message.end() || it->is_null())
        return {};
    if (it->is_string())
        return it->get<std::string>();
    if (!it->is_array())
        bad("message content must be a string, an array of parts or null");
    std::string out;
    for (const Json &part : *it)
        if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string())
            out += part["text"].get<std::string>();
    return out;
}

bool hasContent(const Json &message)
{
    const auto it = message.find("content");
    return it != message.end() && !it->is_null();
}

std::string stringOr(const Json &obj, const char *key)
{
    const auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json &toolCalls(const Json &message)
{
    static const Json kNone = Json::array();
    const auto it = message.find("tool_calls");
    if (it == message.end() || it->is_null())
        return kNone;
    if (!it->is_array())
        bad("'tool_calls' must be an array");
    return *it;
}

const Json &function(const Json &call)
{
    if (!call.is_object())
        bad("a tool call must be an object");
    const auto it = call.find("function");
    return it != call.end() && it->is_object() ? *it : call;
}

std::string argumentsText(const Json &fn)
{
    const auto it = fn.find("arguments");
    if (it == fn.end() || it->is_null())
        return "{}";
    return it->is_string() ? it->get<std::string>() : toJson(*it);
}

std::string toJson(const Json &v) { return pyJsonDumps(v); }

bool addGenerationPrompt(const Json &request)
{
    const auto it = request.find("add_generation_prompt");
    return it == request.end() || !it->is_boolean() || it->get<bool>();
}

std::string systemText(const Json &messages)
{
    std::string system;
    bool first = true;
    for (const Json &m : messages) {
        if (role(m) != "system")
            continue;
        system += (first ? "" : "\n\n") + contentText(m);
        first = false;
    }
    return system;
}

bool hasToolCallsField(const Json &message)
{
    const auto it = message.find("tool_calls");
    return it != message.end() && !it->is_null();
}

std::string lstrip(const std::string &s, const char *chars)
{
    const size_t a = s.find_first_not_of(chars);
    return a == std::string::npos ? std::string() : s.substr(a);
}

std::string rstrip(const std::string &s, const char *chars)
{
    const size_t e = s.find_last_not_of(chars);
    return e == std::string::npos ? std::string() : s.substr(0, e + 1);
}

std::string strip(const std::string &s) { return rstrip(lstrip(s, " \t\n\r\v\f"), " \t\n\r\v\f"); }

Json argumentsObject(const Json &fn, const char *family)
{
    if (!fn.contains("arguments") || fn["arguments"].is_null())
        return Json::object();
    Json args = fn["arguments"];
    const std::string why = std::string("a tool call's arguments are not a JSON object (") + family +
                            " writes each argument on its own)";
    if (args.is_string()) {
        try {
            args = Json::parse(args.get<std::string>().empty() ? std::string("{}") : args.get<std::string>());
        } catch (const Json::exception &) {
            bad(why);
        }
    }
    if (!args.is_object())
        bad(why);
    return args;
}

} // namespace waste::text::family
