#include "text/arg_pairs_call.hpp"

#include "text/call_body_scan.hpp"

namespace waste::text {

using scan::expect;
using scan::kSpace;
using scan::trim;
using scan::until;

namespace {

constexpr std::string_view kKeyOpen = "<arg_key>", kKeyClose = "</arg_key>";
constexpr std::string_view kValueOpen = "<arg_value>", kValueClose = "</arg_value>";

} // namespace

bool isArgPairsTag(std::string_view piece)
{
    return piece == kKeyOpen || piece == kKeyClose || piece == kValueOpen || piece == kValueClose;
}

std::optional<ArgPairsCall> parseArgPairsCall(std::string_view body)
{
    const size_t first = body.find(kKeyOpen);
    ArgPairsCall call;
    call.name = std::string(trim(body.substr(0, first)));
    if (call.name.empty() || call.name.find_first_of(kSpace) != std::string::npos)
        return std::nullopt;
    std::string_view rest = first == std::string_view::npos ? std::string_view() : body.substr(first);
    while (!trim(rest).empty()) {
        if (!expect(rest, kKeyOpen))
            return std::nullopt;
        const auto key = until(rest, kKeyClose);
        if (!key || !expect(rest, kValueOpen))
            return std::nullopt;
        const auto value = until(rest, kValueClose);
        if (!value)
            return std::nullopt;
        call.arguments.push_back({std::string(trim(*key)), std::string(*value)});
    }
    return call;
}

} // namespace waste::text
