// JSON text exactly as Python's json.dumps writes it (the K3 release's encoder is a
// Python program): its float repr, its separators, optional key sorting and
// optional ASCII escaping. Object keys keep their order unless sorted.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace waste::text {

struct PyJsonStyle {
    bool sortKeys = false;
    bool ensureAscii = false;
    const char *itemSeparator = ", "; // Python's defaults
    const char *keySeparator = ": ";
};

std::string pyJsonDumps(const nlohmann::ordered_json &value, const PyJsonStyle &style = {});
// Python's repr() of a float ("1.5", "1e-05", "1e+16", "100.0").
std::string pyFloatRepr(double v);

} // namespace waste::text
