// Compact JSON text of what a model wrote. Its bytes may not be UTF-8 (a call cut off
// mid-character by the token limit): they are written as U+FFFD, where nlohmann's plain dump()
// throws type_error 316 and a request would end in a 500.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace waste::text {

template <class Json>
std::string compactJsonText(const Json &v)
{
    return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace waste::text
