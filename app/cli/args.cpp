#include "args.h"

#include <charconv>
#include <cstdlib>

namespace cli {

namespace {

const OptionSpec *findOption(const ArgSpec &spec, const std::string &name)
{
    for (const auto &o : spec.options)
        if (o.name == name)
            return &o;
    return nullptr;
}

bool looksLikeOption(const std::string &s)
{
    // "-" alone means stdin; negative numbers are values, not options.
    if (s.size() < 2 || s[0] != '-')
        return false;
    return !(std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.');
}

} // namespace

Args Args::parse(const std::vector<std::string> &argv, const ArgSpec &spec)
{
    Args a;
    bool onlyPositionals = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        std::string arg = argv[i];
        if (onlyPositionals || !looksLikeOption(arg)) {
            a.m_positionals.push_back(arg);
            continue;
        }
        if (arg == "--") {
            onlyPositionals = true;
            continue;
        }
        std::optional<std::string> inlineValue;
        if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
            inlineValue = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        const OptionSpec *o = findOption(spec, arg);
        if (!o)
            throw UsageError("unknown option " + arg);
        if (o->kind == OptionKind::Flag) {
            if (inlineValue)
                throw UsageError(arg + " takes no value");
            a.m_flags[arg] = true;
            continue;
        }
        std::string v;
        if (inlineValue) {
            v = *inlineValue;
        } else {
            if (i + 1 >= argv.size())
                throw UsageError(arg + " needs a value");
            v = argv[++i];
            if (looksLikeOption(v) && findOption(spec, v))
                throw UsageError(arg + " needs a value, got the option " + v);
        }
        auto &slot = a.m_values[arg];
        if (o->kind == OptionKind::Value && !slot.empty())
            throw UsageError(arg + " given twice");
        slot.push_back(v);
    }
    const int n = static_cast<int>(a.m_positionals.size());
    if (n < spec.minPositionals)
        throw UsageError("missing argument");
    if (spec.maxPositionals >= 0 && n > spec.maxPositionals)
        throw UsageError("unexpected argument '" + a.m_positionals[spec.maxPositionals] + "'");
    return a;
}

bool Args::flag(const std::string &name) const
{
    auto it = m_flags.find(name);
    return it != m_flags.end() && it->second;
}

std::optional<std::string> Args::value(const std::string &name) const
{
    auto it = m_values.find(name);
    if (it == m_values.end() || it->second.empty())
        return std::nullopt;
    return it->second.back();
}

std::vector<std::string> Args::values(const std::string &name) const
{
    auto it = m_values.find(name);
    return it == m_values.end() ? std::vector<std::string>{} : it->second;
}

long long Args::integer(const std::string &name, long long fallback) const
{
    auto v = value(name);
    if (!v)
        return fallback;
    long long out = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || p != v->data() + v->size())
        throw UsageError(name + " expects a whole number, got '" + *v + "'");
    return out;
}

double Args::number(const std::string &name, double fallback) const
{
    auto v = value(name);
    if (!v)
        return fallback;
    char *end = nullptr;
    const double out = std::strtod(v->c_str(), &end);
    if (v->empty() || end != v->c_str() + v->size())
        throw UsageError(name + " expects a number, got '" + *v + "'");
    return out;
}

std::string Args::text(const std::string &name, const std::string &fallback) const
{
    return value(name).value_or(fallback);
}

} // namespace cli
