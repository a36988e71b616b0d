#include "verb.h"

#include <algorithm>
#include <map>

namespace cli {

namespace {
// Function-local static: registrars in other files may run before any global here.
std::map<std::string, Verb> &verbs()
{
    static std::map<std::string, Verb> all;
    return all;
}
} // namespace

void VerbRegistry::add(Verb verb)
{
    std::string name = verb.name;
    verbs()[name] = std::move(verb);
}

const Verb *VerbRegistry::find(const std::string &name)
{
    auto it = verbs().find(name);
    return it == verbs().end() ? nullptr : &it->second;
}

std::vector<const Verb *> VerbRegistry::sorted()
{
    std::vector<const Verb *> out;
    for (const auto &[name, verb] : verbs())
        out.push_back(&verb);
    return out; // std::map keeps them in name order
}

} // namespace cli
