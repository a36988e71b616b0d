#include "text/arg_pairs_call.hpp"

namespace waste::text {

namespace {

constexpr std::string_view kSpace = " \t\n\r";
constexpr std::string_view kKeyOpen = "<arg_key>", kKeyClose = "</arg_key>";
constexpr std::string_view kValueOpen = "<arg_value>", kValueClose = "</arg_value>";

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
