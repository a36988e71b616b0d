// `waste plan --config config.json`: a release planned from its config alone, before
// anything is downloaded (waste/release_plan.hpp).
#pragma once

namespace cli {

class Args;
int runPlanRelease(const Args &args, int ctx);

} // namespace cli
