// The `waste` command line's verb registry. Each verb lives in its own verb_<name>.cpp and
// registers itself with WASTE_CLI_VERB, so adding a verb never touches another file.
#pragma once

#include "args.h"

#include <string>
#include <vector>

namespace cli {

// Runs a verb; returns the process exit status. Throw UsageError / waste::Error /
// std::exception for failures: main() prints one line and exits non-zero.
using VerbFunction = int (*)(const Args &args);

struct Verb {
    std::string name;
    std::string usage;   // "MODEL [--json]": shown after "waste <name> "
    std::string summary; // one line for `waste --help`
    ArgSpec spec;
    VerbFunction run = nullptr;
};

class VerbRegistry {
public:
    static void add(Verb verb);
    static const Verb *find(const std::string &name);
    static std::vector<const Verb *> sorted();
};

struct VerbRegistrar {
    explicit VerbRegistrar(Verb verb) { VerbRegistry::add(std::move(verb)); }
};

} // namespace cli

#define WASTE_CLI_CONCAT_INNER(a, b) a##b
#define WASTE_CLI_CONCAT(a, b) WASTE_CLI_CONCAT_INNER(a, b)
// WASTE_CLI_VERB({"name", "usage", "summary", {options...}, &function});
#define WASTE_CLI_VERB(...) \
    static const cli::VerbRegistrar WASTE_CLI_CONCAT(wasteVerbRegistrar_, __LINE__){cli::Verb __VA_ARGS__}
