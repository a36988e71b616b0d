#include "waste/waste.hpp"

namespace waste {

std::string buildInfo()
{
    std::string arch =
#if defined(__x86_64__)
        "x86_64";
#elif defined(__aarch64__)
        "aarch64";
#else
        "unknown";
#endif
    return std::string("WASTE Studio ") + kVersion + " (container v0, " + arch + ")";
}

} // namespace waste
