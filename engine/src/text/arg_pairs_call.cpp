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

// Whether a name, key or value holds one of the pairs' tags: the pairs are out of order
// (a value before its key, a key left open), so the body is not a call.
bool holdsTag(std::string_view text)
{
    for (std::string_view tag : {kKeyOpen, kKeyClose, kValueOpen, kValueClose})
        if (text.find(tag) != std::string_view::npos)
            return true;
    return false;
}

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
    if (call.name.empty() || call.name.find_first_of(kSpace) != std::string::npos || holdsTag(call.name))
        return std::nullopt;
    std::string_view rest = first == std::string_view::npos ? std::string_view() : body.substr(first);
    while (!trim(rest).empty()) {
        if (!expect(rest, kKeyOpen))
            return std::nullopt;
        const auto key = until(rest, kKeyClose);
        if (!key || !expect(rest, kValueOpen))
            return std::nullopt;
        const auto value = until(rest, kValueClose);
        if (!value || holdsTag(*key) || holdsTag(*value))
            return std::nullopt;
        call.arguments.push_back({std::string(trim(*key)), std::string(*value)});
    }
    return call;
}

} // namespace waste::text
