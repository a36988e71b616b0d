#include "waste/usage_paths.hpp"

#include <filesystem>

namespace waste {

std::string usageRecordPath(const std::string &containerDir, const std::string &chosen)
{
    if (!chosen.empty())
        return chosen;
    return (std::filesystem::path(containerDir) / "usage.waste").lexically_normal().string();
}

std::string routingRecordPath(const std::string &usagePath)
{
    return (std::filesystem::path(usagePath).parent_path() / "usage.routing.jsonl").string();
}

} // namespace waste
