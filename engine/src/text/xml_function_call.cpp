#include "text/xml_function_call.hpp"

#include "text/call_body_scan.hpp"

namespace waste::text {

using scan::expect;
using scan::kSpace;
using scan::trim;
using scan::until;

namespace {

constexpr std::string_view kFunctionOpen = "<function=", kFunctionClose = "</function>";
constexpr std::string_view kParamOpen = "<parameter=", kParamClose = "</parameter>";

} // namespace

std::optional<XmlFunctionCall> parseXmlFunctionCall(std::string_view body)
{
    XmlFunctionCall call;
    if (!expect(body, kFunctionOpen))
        return std::nullopt;
    const auto name = until(body, ">");
    if (!name)
        return std::nullopt;
    call.name = std::string(trim(*name));
    if (call.name.empty() || call.name.find_first_of(kSpace) != std::string::npos)
        return std::nullopt;
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
        call.arguments.push_back({std::string(trim(*key)), std::string(v)});
    }
    return call;
}

} // namespace waste::text
