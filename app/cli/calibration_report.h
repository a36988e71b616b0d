// How `waste plan` reports the compute calibration it priced with: the same JSON fields and
// the same stderr warning for a container (MODEL) and for a release (--config), so a planner
// that fell back to an unmeasured decode scale says so whichever way it was asked.
#pragma once

#include <waste/calibration.hpp>

#include <nlohmann/json.hpp>

namespace cli {

// Adds decode_scale and decode_scale_fallback (null when the scale was measured; else why
// it was not) to `out`.
void addDecodeScaleFields(nlohmann::ordered_json &out, const waste::ComputeCalibration &cal);

// Prints on stderr what the fallback means and how to measure again; nothing when measured.
void warnDecodeScaleFallback(const waste::ComputeCalibration &cal);

} // namespace cli
