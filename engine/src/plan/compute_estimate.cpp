// Compute time per decoded token: what a token runs (plan inputs' per-token calls, from a
// manifest or a release's config) priced by this machine's calibration.
#include "plan/compute_estimate.hpp"

#include "plan/plan_inputs.hpp"

#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <string_view>

namespace waste {

namespace plan {

ComputeEstimate estimateCompute(const PlanInputs &in, const ComputeCalibration &c)
{
    ComputeEstimate e;
    for (const TokenCall &call : in.perToken) {
        double one = c.secondsFor(call.kernel, call.size);
        const std::string_view cold(kColdSuffix);
        if (one < 0 && call.kernel.size() > cold.size() && call.kernel.ends_with(cold))
            one = c.secondsFor(call.kernel.substr(0, call.kernel.size() - cold.size()), call.size);
        if (one < 0) {
            // A kernel this calibration predates: priced as F32 streaming of the same bytes
            // rather than as free.
            one = c.secondsFor("F32", call.size);
            if (one < 0)
                continue;
        }
        const double s = one * double(call.count);
        e.seconds += s;
        if (call.overlapsReads)
            e.overlapSeconds += s;
        if (call.routedExperts)
            e.routedExpertSeconds += s;
        bool found = false;
        for (auto &[k, v] : e.byKernel)
            if (k == call.kernel) {
                v += s;
                found = true;
            }
        if (!found)
            e.byKernel.emplace_back(call.kernel, s);
    }
    // Scaled once the whole sum is known: the factor depends on it (ComputeCalibration::scaleFor).
    const double f = c.scaleFor(e.seconds);
    e.seconds *= f;
    e.overlapSeconds *= f;
    e.routedExpertSeconds *= f;
    for (auto &kv : e.byKernel)
        kv.second *= f;
    return e;
}

} // namespace plan

ComputeEstimate estimateComputePerToken(const std::string &containerPath, const ComputeCalibration &c)
{
    return plan::estimateCompute(plan::readPlanInputs(containerPath), c);
}

} // namespace waste
