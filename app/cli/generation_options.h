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
// "[96 tokens, 1.70 s, 56.47 tok/s after the prompt (read in 5.97 s) | experts 5925 hit / 2135 miss = 74%]".
// The run's summary on stderr, the reference's layout: the tokens written, the seconds they took
// after the prompt was read and their speed (the prompt's own time beside it, since a prompt now
// reads many times faster than tokens are written), and the expert cache's hits.
void printStatsLine(const waste::Stats &s, int tokens, double seconds, double promptSeconds);

} // namespace cli
