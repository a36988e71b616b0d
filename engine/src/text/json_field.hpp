// An optional string member of a request object, read without exceptions: chat requests
// come from clients, and a missing or mistyped field is simply absent.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace waste::text {

// The member `key` of `obj` when `obj` is an object and the member a string; else null.
inline const std::string *stringField(const nlohmann::ordered_json &obj, const char *key)
{
    if (!obj.is_object())
        return nullptr;
    const auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? &it->get_ref<const std::string &>() : nullptr;
}

} // namespace waste::text
