// Sampling options shared by run and chat, and the stats line they print on stderr.
#pragma once

#include "args.h"

#include <waste/waste.hpp>

#include <vector>

namespace cli {

// -n, --temp, --top-p, --top-k, --seed, --stop
std::vector<OptionSpec> samplingOptions();
// --system TEXT, --think: how a model with a chat template is asked (run, chat)
std::vector<OptionSpec> templateOptions();
// samplingOptions + model options + templateOptions + --file, --image, --raw, -q
std::vector<OptionSpec> runOptions();
waste::GenParams genParams(const Args &args);
// "[16 tokens, 25.95 s, 0.62 tok/s | experts 9038 hit / 14514 miss = 38%]"
void printStatsLine(const waste::Stats &s, int tokens, double seconds);

} // namespace cli
