#include "text/k3_arguments.hpp"

#include "text/python_json.hpp"
#include "waste/waste.hpp"

namespace waste::text {

using Json = nlohmann::ordered_json;

namespace {

// Python's json.dumps defaults (", " and ": ", non-ASCII kept): how the encoder writes a value.
std::string valueJson(const Json &v) { return pyJsonDumps(v, {false, false, ", ", ": "}); }

K3Argument typedArgument(const std::string &key, const Json &v)
{
    if (v.is_string())
        return {key, "string", v.get<std::string>()};
    if (v.is_boolean()) // before numbers: a boolean is never a number
        return {key, "boolean", valueJson(v)};
    if (v.is_null())
        return {key, "null", valueJson(v)};
    if (v.is_number())
        return {key, "number", valueJson(v)};
    return {key, v.is_object() ? "object" : "array", valueJson(v)};
}

bool isBlank(const std::string &s) { return s.find_first_not_of(" \t\n\r\f\v") == std::string::npos; }

} // namespace

K3Arguments k3Arguments(const Json &arguments, const std::string &where)
{
    K3Arguments out;
    if (arguments.is_null())
        return out;
    const Json *object = &arguments;
    Json parsed;
    if (arguments.is_string()) {
        const std::string &raw = arguments.get_ref<const std::string &>();
        if (isBlank(raw))
            return out;
        try {
            parsed = Json::parse(raw);
        } catch (const Json::exception &) {
            out.raw = raw;
            return out;
        }
        object = &parsed;
    }
    if (!object->is_object())
        throw Error(ErrorCode::Argument, "chat request: " + where + " must be a JSON object or a string holding one, not " +
                                             (arguments.is_string() ? "a string holding JSON " : "JSON ") +
                                             object->type_name());
    for (auto it = object->begin(); it != object->end(); ++it)
        out.typed.push_back(typedArgument(it.key(), it.value()));
    return out;
}

} // namespace waste::text
