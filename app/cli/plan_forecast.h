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
std::vector<int64_t> budgetLadder(const waste::MemoryPlan &p, int64_t defaultBudget, int64_t asked,
                                  int64_t checkpointBytes = 0);
// The budget at which the cache holds every expert record of the model. A model opened at a
// budget its user chose keeps its state checkpoint (waste/prefix.hpp, checkpointBytes) in the
// expert cache, so that budget holds the checkpoint too; a release not yet on disk has none.
int64_t everyExpertBudget(const waste::MemoryPlan &p, int64_t checkpointBytes = 0);

nlohmann::ordered_json forecastJson(const waste::Forecast &fc, double computeSeconds, double overlapSeconds);
void printForecast(const waste::Forecast &fc, double computeSeconds);

// --disk-gbps X or --disk-mbps N (10^6 bytes per second); 0 when neither is given.
class Args;
double diskGBpsOption(const Args &args);

} // namespace cli
