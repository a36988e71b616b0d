#include "format/config_keys.hpp"

#include "waste/waste.hpp"

#include <cmath>

namespace waste::format::config {

using nlohmann::json;

void refuse(const std::string &where, const std::string &what)
{
    throw Error(ErrorCode::Format, where + ": " + what + " (the config does not describe a model this engine runs)");
}

double number(const json &o, const char *key, double def, const std::string &where)
{
    auto it = o.find(key);
    if (it == o.end() || it->is_null())
        return def;
    if (!it->is_number())
        refuse(where, std::string("config key '") + key + "' is not a number");
    return it->get<double>();
}

int count(const json &o, const char *key, int def, int lo, int hi, const std::string &where)
{
    const double v = number(o, key, def, where);
    if (!(v >= lo && v <= hi) || std::trunc(v) != v)
        refuse(where, std::string("config key '") + key + "' = " + std::to_string(v) + " is not a whole number in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(v);
}

std::string text(const json &o, const char *key, const std::string &def)
{
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : def;
}

bool flag(const json &o, const char *key, bool def)
{
    auto it = o.find(key);
    return it != o.end() && it->is_boolean() ? it->get<bool>() : def;
}

} // namespace waste::format::config
