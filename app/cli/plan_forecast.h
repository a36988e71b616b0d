// What `waste plan` says about speed, shared by its two forms (a container, or a release's
// config.json): the budget ladder, the forecast's JSON and its lines of text.
#pragma once

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cli {

// Floor, floor + 1/2/3 working sets, the default, a budget holding every expert, the cliff
// and (when given) the budget asked about; ascending, no repeats.
std::vector<int64_t> budgetLadder(const waste::MemoryPlan &p, int64_t defaultBudget, int64_t asked);

nlohmann::ordered_json forecastJson(const waste::Forecast &fc, double computeSeconds, double overlapSeconds);
void printForecast(const waste::Forecast &fc, double computeSeconds);

// --disk-gbps X or --disk-mbps N (10^6 bytes per second); 0 when neither is given.
class Args;
double diskGBpsOption(const Args &args);

} // namespace cli
