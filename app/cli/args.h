// Command-line arguments of one verb: positionals in any order plus declared options.
// Anything undeclared, a missing value or a value that looks like an option is a usage error,
// never a silent misparse.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cli {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class OptionKind { Flag, Value, Repeated };

struct OptionSpec {
    std::string name; // "--budget", "-n"
    OptionKind kind = OptionKind::Flag;
    std::string help; // "SIZE  RAM ceiling (8G, 512M, bytes)"
};

struct ArgSpec {
    std::vector<OptionSpec> options;
    int minPositionals = 0;
    int maxPositionals = 0; // -1: unbounded
};

class Args {
public:
    static Args parse(const std::vector<std::string> &argv, const ArgSpec &spec);

    const std::vector<std::string> &positionals() const { return m_positionals; }
    const std::string &positional(size_t i) const { return m_positionals.at(i); }
    bool flag(const std::string &name) const;
    std::optional<std::string> value(const std::string &name) const;
    std::vector<std::string> values(const std::string &name) const;

    // Typed accessors: a malformed number is a UsageError naming the option.
    long long integer(const std::string &name, long long fallback) const;
    double number(const std::string &name, double fallback) const;
    std::string text(const std::string &name, const std::string &fallback) const;

private:
    std::vector<std::string> m_positionals;
    std::map<std::string, std::vector<std::string>> m_values;
    std::map<std::string, bool> m_flags;
};

} // namespace cli
