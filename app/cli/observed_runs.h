// This machine's real runs of a model, shared with the desktop app (planner/observedspeeds, in
// the app's data folder): `waste bench`, `run`, `chat` and `serve` add their speeds, and
// `waste plan` scales its forecast by what the runs measured against it, as the Planner does,
// and says how many runs that rests on. So one busy calibration, or a kind of CPU the estimate
// was not tuned on, stops mattering after a few runs, from either program.
#pragma once

#include "planner/observedspeeds.h"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace cli {

// The desktop app's observed-speeds file.
std::string observedSpeedsFile();

// Adds a run of `container` (ObservedSpeeds::measured) to that file; quietly nothing when it
// cannot be written or the run measured nothing.
void recordRun(const std::string &container, const ObservedRun &run);

// One answer of `waste run` or `waste chat`: `readSecs` after its start the first token came,
// `secs` after it the last; its decode and prompt speeds where they are long enough to say
// (ObservedSpeeds' thresholds, the app's).
void recordAnswer(const std::string &container, int64_t budget, const waste::GenResult &r, double readSecs,
                  double secs);

using RunCorrection = ObservedSpeeds::Correction;
// The container's runs against the uncorrected forecast at each run's budget.
RunCorrection runCorrection(const std::string &container, const std::function<double(int64_t)> &predictedDecode,
                            const std::function<double(int64_t)> &predictedPrefill);

// Scales the forecast's tok/s by the correction.
void applyCorrection(waste::Forecast &fc, const RunCorrection &c);
nlohmann::ordered_json correctionJson(const RunCorrection &c);
// "  corrected by this model's real runs on this machine: ..." (nothing without runs).
void printCorrection(const RunCorrection &c);

} // namespace cli
