#include "calibration_report.h"

#include <cstdio>

namespace cli {

void addDecodeScaleFields(nlohmann::ordered_json &out, const waste::ComputeCalibration &cal)
{
    out["decode_scale"] = cal.decodeScale;
    out["decode_scale_fallback"] =
        cal.decodeScaleError.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(cal.decodeScaleError);
}

void warnDecodeScaleFallback(const waste::ComputeCalibration &cal)
{
    if (cal.decodeScaleError.empty())
        return;
    std::fprintf(stderr,
                 "warning: the decode scale was not measured (%s); compute is priced by the kernels alone, "
                 "so tokens/s are likely too high. Free space in the temporary folder (TMPDIR) and run "
                 "`waste plan MODEL --calibrate`.\n",
                 cal.decodeScaleError.c_str());
}

} // namespace cli
