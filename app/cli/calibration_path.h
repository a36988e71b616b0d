// Where the command line keeps this machine's compute calibration: the user's cache folder
// ($XDG_CACHE_HOME, else ~/.cache, on Windows %LOCALAPPDATA%), the same file the app uses
// (its QStandardPaths::GenericCacheLocation), so a calibration made by either serves both.
#pragma once

#include <string>

namespace cli {

std::string calibrationPath();

} // namespace cli
