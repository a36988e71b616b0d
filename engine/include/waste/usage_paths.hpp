// Where a --learn record and the routing beside it live. One rule for the engine (which
// writes and warms from them), the planner (which replays the routing) and the CLI (which
// tells the person where they went).
#pragma once

#include <string>

namespace waste {

// The --learn record of the container at containerDir: `chosen` when it is not empty
// (ModelOptions::usagePath, `--usage`), else containerDir/usage.waste.
std::string usageRecordPath(const std::string &containerDir, const std::string &chosen = {});
// usage.routing.jsonl in the record's folder (the trace format cache-sim and the planner read).
std::string routingRecordPath(const std::string &usagePath);

} // namespace waste
