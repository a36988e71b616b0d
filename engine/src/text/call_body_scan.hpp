// Reading a tool-call body written as tags (GLM's <arg_key>/<arg_value> pairs, Qwen3-Coder's
// <function=…><parameter=…> blocks): the three steps both parsers take over the text.
#pragma once

#include <optional>
#include <string_view>

namespace waste::text::scan {

inline constexpr std::string_view kSpace = " \t\n\r";

inline std::string_view trim(std::string_view s)
{
    const size_t a = s.find_first_not_of(kSpace);
    if (a == std::string_view::npos)
        return {};
    return s.substr(a, s.find_last_not_of(kSpace) - a + 1);
}

// Skips whitespace, then `tag`; false when something else stands there.
inline bool expect(std::string_view &s, std::string_view tag)
{
    const size_t a = s.find_first_not_of(kSpace);
    s.remove_prefix(a == std::string_view::npos ? s.size() : a);
    if (!s.starts_with(tag))
        return false;
    s.remove_prefix(tag.size());
    return true;
}

// The text up to `close`, consumed with it; none when `close` never comes.
inline std::optional<std::string_view> until(std::string_view &s, std::string_view close)
{
    const size_t at = s.find(close);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::string_view inner = s.substr(0, at);
    s.remove_prefix(at + close.size());
    return inner;
}

} // namespace waste::text::scan
