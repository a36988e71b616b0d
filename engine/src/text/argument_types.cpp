#include "text/argument_types.hpp"

#include "text/json_text.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

bool isStringSchema(const nlohmann::json &schema)
{
    if (!schema.is_object() || !schema.contains("type"))
        return false;
    const nlohmann::json &t = schema.at("type");
    if (t.is_string())
        return t.get<std::string>() == "string";
    if (!t.is_array())
        return false;
    bool string = false;
    for (const nlohmann::json &x : t) {
        if (!x.is_string())
            return false;
        if (x.get<std::string>() == "string")
            string = true;
        else if (x.get<std::string>() != "null")
            return false;
    }
    return string;
}

StringArguments stringArgumentsOf(std::string_view toolsJson)
{
    StringArguments out;
    const nlohmann::json tools = nlohmann::json::parse(toolsJson, nullptr, false);
    if (!tools.is_array())
        return out;
    for (const nlohmann::json &t : tools) {
        const nlohmann::json &fn = t.is_object() && t.contains("function") ? t.at("function") : t;
        if (!fn.is_object() || !fn.contains("name") || !fn.at("name").is_string())
            continue;
        std::set<std::string> &names = out[fn.at("name").get<std::string>()];
        const auto p = fn.find("parameters");
        if (p == fn.end() || !p->is_object() || !p->contains("properties") || !p->at("properties").is_object())
            continue;
        for (const auto &[name, schema] : p->at("properties").items())
            if (isStringSchema(schema))
                names.insert(name);
    }
    return out;
}

std::string argumentsJson(const std::vector<RawArgument> &args, const std::set<std::string> *strings)
{
    using Json = nlohmann::ordered_json;
    Json out = Json::object();
    for (const RawArgument &a : args) {
        if (strings && strings->contains(a.key)) {
            out[a.key] = a.text;
            continue;
        }
        Json v = Json::parse(a.text, nullptr, false);
        out[a.key] = v.is_discarded() ? Json(a.text) : std::move(v);
    }
    return compactJsonText(out);
}

} // namespace waste::text
