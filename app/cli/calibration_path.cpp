#include "calibration_path.h"

#include <cstdlib>
#include <filesystem>

namespace cli {

std::string calibrationPath()
{
    namespace fs = std::filesystem;
    fs::path base;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
        base = x;
#ifdef _WIN32
    else if (const char *l = std::getenv("LOCALAPPDATA"); l && *l)
        base = l;
#else
    else if (const char *h = std::getenv("HOME"); h && *h)
        base = fs::path(h) / ".cache";
#endif
    else
        base = fs::temp_directory_path();
    return (base / "waste" / "compute-calibration.json").string();
}

} // namespace cli
