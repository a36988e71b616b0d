// The rules for reading a model's config keys, one set for every family's reader
// (deepseek_config, gqa_config, dsa_config, dsv4_config): a key that is absent or null takes
// its default, a key of the wrong type or out of range is refused with its name, and
// `where` (the file being read) starts every message.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace waste::format::config {

// Throws waste::Error(Format): "WHERE: WHAT (...)".
[[noreturn]] void refuse(const std::string &where, const std::string &what);

// A number key, or `def` when absent or null; a value of another type is refused.
double number(const nlohmann::json &o, const char *key, double def, const std::string &where);

// A whole number in [lo, hi], or `def` when absent or null.
int count(const nlohmann::json &o, const char *key, int def, int lo, int hi, const std::string &where);

// A string key, or `def` when absent or not a string.
std::string text(const nlohmann::json &o, const char *key, const std::string &def = {});

// A boolean key, or `def` when absent or not a boolean.
bool flag(const nlohmann::json &o, const char *key, bool def);

} // namespace waste::format::config
