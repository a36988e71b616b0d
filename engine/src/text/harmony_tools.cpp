// The tool declarations of a harmony developer message: each function of an OpenAI
// `tools` array as a TypeScript-like type in `namespace functions`, its JSON-schema
// parameters written as the release's chat_template writes them. The layout quirks
// (the line break before a nested property's type, " | " plus a line break between
// oneOf variants) are the release's; the model was trained on them.
#include "text/family_request.hpp"
#include "text/harmony_template.hpp"
#include "text/python_json.hpp"

namespace waste::text {

using family::Json;

namespace {

// Jinja's truth of a value: absent, null, false, 0, "" and empty containers are false.
bool truthy(const Json *v)
{
    if (!v || v->is_null())
        return false;
    if (v->is_boolean())
        return v->get<bool>();
    if (v->is_string())
        return !v->get_ref<const std::string &>().empty();
    if (v->is_array() || v->is_object())
        return !v->empty();
    if (v->is_number_integer())
        return v->get<int64_t>() != 0;
    if (v->is_number())
        return v->get<double>() != 0.0;
    return true;
}

const Json *field(const Json &obj, const char *key)
{
    if (!obj.is_object())
        return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

bool typeIs(const Json &spec, const char *name)
{
    const Json *t = field(spec, "type");
    return t && t->is_string() && t->get_ref<const std::string &>() == name;
}

// Python's str() of a JSON scalar (what Jinja's join and + write).
std::string pyStr(const Json &v)
{
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_null())
        return "None";
    if (v.is_number_float())
        return pyFloatRepr(v.get<double>());
    return pyJsonDumps(v);
}

bool listed(const Json *required, const std::string &name)
{
    if (!required || !required->is_array())
        return false;
    for (const Json &r : *required)
        if (r.is_string() && r.get_ref<const std::string &>() == name)
            return true;
    return false;
}

std::string typeOf(const Json &spec);

std::string nullable(const Json &spec) { return truthy(field(spec, "nullable")) ? " | null" : ""; }

std::string arrayType(const Json &spec)
{
    const Json *items = field(spec, "items");
    if (!items)
        return "any[]" + nullable(spec);
    std::string out;
    if (typeIs(*items, "string"))
        out = "string[]";
    else if (typeIs(*items, "number") || typeIs(*items, "integer"))
        out = "number[]";
    else if (typeIs(*items, "boolean"))
        out = "boolean[]";
    else {
        const std::string inner = typeOf(*items);
        // Unions of objects and long inner types read as any[] (Jinja's length counts characters).
        out = inner == "object | object" || inner.size() > 50 ? "any[]" : inner + "[]";
    }
    return out + nullable(spec);
}

std::string oneOfType(const Json &variants)
{
    // The release checks for object variants inside its loop, where Jinja's scoping
    // discards the flag, so every variant is always written.
    std::string out;
    for (size_t i = 0; i < variants.size(); ++i) {
        const Json &v = variants[i];
        out += typeOf(v);
        if (const Json *d = field(v, "description"); truthy(d))
            out += "// " + pyStr(*d);
        if (const Json *d = field(v, "default"))
            out += "                    // default: " + pyJsonDumps(*d);
        if (i + 1 < variants.size())
            out += " | \n";
    }
    return out;
}

std::string objectType(const Json &spec)
{
    const Json *props = field(spec, "properties");
    if (!truthy(props) || !props->is_object())
        return "object";
    const Json *required = field(spec, "required");
    std::string out = "{\n";
    bool first = true;
    for (auto it = props->begin(); it != props->end(); ++it) {
        if (!first)
            out += ", ";
        first = false;
        out += it.key() + (listed(required, it.key()) ? "" : "?") + ": \n                " + typeOf(it.value());
    }
    return out + "}";
}

std::string typeOf(const Json &spec)
{
    if (typeIs(spec, "array"))
        return arrayType(spec);
    if (const Json *t = field(spec, "type"); t && t->is_array() && !t->empty()) {
        std::string out;
        for (size_t i = 0; i < t->size(); ++i)
            out += (i ? " | " : "") + pyStr((*t)[i]);
        return out;
    }
    if (const Json *one = field(spec, "oneOf"); truthy(one) && one->is_array())
        return oneOfType(*one);
    if (typeIs(spec, "string")) {
        if (const Json *e = field(spec, "enum"); truthy(e) && e->is_array()) {
            std::string out = "\"";
            for (size_t i = 0; i < e->size(); ++i)
                out += (i ? "\" | \"" : "") + pyStr((*e)[i]);
            return out + "\"";
        }
        return "string" + nullable(spec);
    }
    if (typeIs(spec, "number") || typeIs(spec, "integer"))
        return "number";
    if (typeIs(spec, "boolean"))
        return "boolean";
    if (typeIs(spec, "object"))
        return objectType(spec);
    return "any";
}

std::string declaration(const Json &tool)
{
    const Json *fnField = field(tool, "function");
    const Json &fn = fnField && fnField->is_object() ? *fnField : tool;
    const Json *name = field(fn, "name");
    if (!name || !name->is_string() || name->get_ref<const std::string &>().empty())
        family::bad("every tool needs a function name");
    std::string out;
    if (const Json *d = field(fn, "description"); d && d->is_string())
        out += "// " + d->get<std::string>() + "\n";
    out += "type " + name->get<std::string>() + " = ";
    const Json *params = field(fn, "parameters");
    const Json *props = params ? field(*params, "properties") : nullptr;
    if (!truthy(params) || !truthy(props) || !props->is_object())
        return out + "() => any;\n\n";
    const Json *required = field(*params, "required");
    out += "(_: {\n";
    for (auto it = props->begin(); it != props->end(); ++it) {
        const Json &spec = it.value();
        if (const Json *d = field(spec, "description"); truthy(d))
            out += "// " + pyStr(*d) + "\n";
        out += it.key() + (listed(required, it.key()) ? "" : "?") + ": " + typeOf(spec);
        if (const Json *dflt = field(spec, "default")) {
            if (truthy(field(spec, "enum")))
                out += ", // default: " + pyStr(*dflt);
            else if (truthy(field(spec, "oneOf")))
                out += "// default: " + pyStr(*dflt);
            else
                out += ", // default: " + pyJsonDumps(*dflt);
        }
        out += ",\n";
    }
    return out + "}) => any;\n\n";
}

} // namespace

std::string harmonyToolNamespace(const Json &tools)
{
    if (!tools.is_array())
        family::bad("'tools' must be an array");
    std::string out = "## functions\n\nnamespace functions {\n\n";
    for (const Json &tool : tools)
        out += declaration(tool);
    return out + "} // namespace functions";
}

} // namespace waste::text
