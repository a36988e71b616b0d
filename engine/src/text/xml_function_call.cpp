#include "text/xml_function_call.hpp"

#include <nlohmann/json.hpp>

namespace waste::text {

namespace {

constexpr std::string_view kSpace = " \t\n\r";
constexpr std::string_view kFunctionOpen = "<function=", kFunctionClose = "</function>";
constexpr std::string_view kParamOpen = "<parameter=", kParamClose = "</parameter>";

std::string_view trim(std::string_view s)
{
    const size_t a = s.find_first_not_of(kSpace);
    if (a == std::string_view::npos)
        return {};
    return s.substr(a, s.find_last_not_of(kSpace) - a + 1);
}

// Skips whitespace, then `tag`; false when something else stands there.
bool expect(std::string_view &s, std::string_view tag)
{
    const size_t a = s.find_first_not_of(kSpace);
    s.remove_prefix(a == std::string_view::npos ? s.size() : a);
    if (!s.starts_with(tag))
        return false;
    s.remove_prefix(tag.size());
    return true;
}

// The text up to `close`, consumed with it; none when `close` never comes.
std::optional<std::string_view> until(std::string_view &s, std::string_view close)
{
    const size_t at = s.find(close);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::string_view inner = s.substr(0, at);
    s.remove_prefix(at + close.size());
    return inner;
}

} // namespace

std::optional<XmlFunctionCall> parseXmlFunctionCall(std::string_view body)
{
    using Json = nlohmann::ordered_json;
    XmlFunctionCall call;
    if (!expect(body, kFunctionOpen))
        return std::nullopt;
    const auto name = until(body, ">");
    if (!name)
        return std::nullopt;
    call.name = std::string(trim(*name));
    if (call.name.empty() || call.name.find_first_of(kSpace) != std::string::npos)
        return std::nullopt;
    Json args = Json::object();
    for (;;) {
        std::string_view rest = body;
        if (expect(rest, kFunctionClose)) {
            if (!trim(rest).empty())
                return std::nullopt; // text after </function> inside the block
            break;
        }
        if (!expect(body, kParamOpen))
            return std::nullopt;
        const auto key = until(body, ">");
        if (!key)
            return std::nullopt;
        auto value = until(body, kParamClose);
        if (!value)
            return std::nullopt;
        // The template writes "\n" VALUE "\n": one newline each side is the frame's.
        std::string_view v = *value;
        if (v.starts_with('\n'))
            v.remove_prefix(1);
        if (v.ends_with('\n'))
            v.remove_suffix(1);
        // A value the template wrote with tojson (mappings, lists) reads back as that JSON,
        // as do numbers; a string it wrote as it is (which may not be JSON) stays the string.
        Json parsed = Json::parse(v, nullptr, false);
        args[std::string(trim(*key))] = parsed.is_discarded() ? Json(std::string(v)) : std::move(parsed);
    }
    call.arguments = args.dump();
    return call;
}

} // namespace waste::text
