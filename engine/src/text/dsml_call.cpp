#include "text/dsml_call.hpp"

#include "text/deepseek_markers.hpp"
#include "text/family_request.hpp"
#include "text/json_text.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace waste::text {

namespace {

// Python's json.dumps of a string (non-ASCII kept), as the encoder's decoder quotes values.
std::string quoted(std::string_view s) { return compactJsonText(nlohmann::json(std::string(s))); }

struct Cursor {
    std::string_view s;
    size_t at = 0;
    void skipSpace()
    {
        while (at < s.size() && (s[at] == ' ' || s[at] == '\n' || s[at] == '\r' || s[at] == '\t'))
            ++at;
    }
    bool take(std::string_view lit)
    {
        if (s.substr(at, lit.size()) != lit)
            return false;
        at += lit.size();
        return true;
    }
    // The text up to `end` (consumed with it); none when `end` does not follow.
    std::optional<std::string_view> until(std::string_view end)
    {
        const size_t e = s.find(end, at);
        if (e == std::string_view::npos)
            return std::nullopt;
        const std::string_view out = s.substr(at, e - at);
        at = e + end.size();
        return out;
    }
};

} // namespace

std::optional<std::vector<DsmlCall>> parseDsmlCalls(std::string_view body)
{
    const std::string d = deepseek::kDsml;
    const std::string invoke = "<" + d + "invoke name=\"", invokeEnd = "</" + d + "invoke>";
    const std::string param = "<" + d + "parameter name=\"", paramEnd = "</" + d + "parameter>";
    Cursor c{body};
    std::vector<DsmlCall> calls;
    for (;;) {
        c.skipSpace();
        if (c.at == body.size())
            break;
        if (!c.take(invoke))
            return std::nullopt;
        const auto name = c.until("\">");
        if (!name || name->empty() || name->find('"') != std::string_view::npos)
            return std::nullopt;
        DsmlCall call{std::string(*name), "{"};
        std::set<std::string, std::less<>> seen;
        for (;;) {
            c.skipSpace();
            if (c.take(invokeEnd))
                break;
            if (!c.take(param))
                return std::nullopt;
            const auto key = c.until("\" string=\"");
            if (!key || key->find('"') != std::string_view::npos || !seen.insert(std::string(*key)).second)
                return std::nullopt;
            bool isString = false;
            if (c.take("true\">"))
                isString = true;
            else if (!c.take("false\">"))
                return std::nullopt;
            const auto value = c.until(paramEnd);
            if (!value)
                return std::nullopt;
            if (!isString && !nlohmann::json::accept(std::string(*value)))
                return std::nullopt; // a non-string value must be the JSON text it says it is
            call.arguments += (seen.size() > 1 ? ", " : "") + quoted(*key) + ": " + (isString ? quoted(*value) : std::string(*value));
        }
        call.arguments += "}";
        calls.push_back(std::move(call));
    }
    if (calls.empty())
        return std::nullopt;
    return calls;
}

void writeDsmlInvoke(SegmentWriter &w, const nlohmann::ordered_json &call)
{
    using Json = nlohmann::ordered_json;
    const std::string d = deepseek::kDsml;
    const Json &fn = family::function(call);
    w.markup("<" + d + "invoke name=\"");
    w.text(family::stringOr(fn, "name"));
    w.markup("\">\n");
    const std::string raw = family::argumentsText(fn);
    Json args;
    try {
        args = Json::parse(raw);
    } catch (const Json::exception &) {
        args = Json();
    }
    if (!args.is_object())
        args = Json{{"arguments", raw}};
    bool first = true;
    for (const auto &[key, value] : args.items()) {
        if (!first)
            w.markup("\n");
        first = false;
        w.markup("<" + d + "parameter name=\"");
        w.text(key);
        w.markup(std::string("\" string=\"") + (value.is_string() ? "true" : "false") + "\">");
        w.text(value.is_string() ? value.get<std::string>() : family::toJson(value));
        w.markup("</" + d + "parameter>");
    }
    w.markup("\n</" + d + "invoke>");
}

void writeDsmlCalls(SegmentWriter &w, const nlohmann::ordered_json &calls, const std::string &block)
{
    if (!calls.is_array() || calls.empty())
        return;
    const std::string d = deepseek::kDsml;
    w.markup("\n\n<" + d + block + ">\n");
    for (size_t k = 0; k < calls.size(); ++k) {
        if (k > 0)
            w.markup("\n");
        writeDsmlInvoke(w, calls[k]);
    }
    w.markup("\n</" + d + block + ">");
}

} // namespace waste::text
