// What the model-running verbs (info, tokenize, eval, run, chat) share: the options that
// open a model (--budget, --ctx, --verify) and reading a prompt from the argument, a file or stdin.
#pragma once

#include "args.h"

#include <waste/waste.hpp>

#include <memory>
#include <string>
#include <vector>

namespace cli {

// --budget SIZE, --ctx N, --verify, --usage FILE.
std::vector<OptionSpec> modelOptions();
// --file F (prompt from a file or '-' for stdin).
OptionSpec fileOption();

// Opens the model with those options and the environment's (waste::withEnvironment), and
// prints the engine's warnings to stderr.
std::unique_ptr<waste::Model> openModel(const Args &args);

// Where the --learn record of the model at positional 0 is (waste::usageRecordPath with
// --usage); its routing goes beside it (waste::routingRecordPath).
std::string usagePath(const Args &args);

// The prompt: positional `index` ("-" = stdin), --file, or piped stdin when no positional.
// Trailing '\n' and '\r' are stripped from file/stdin input, as the reference CLI does.
std::string readPrompt(const Args &args, size_t index);

// JSON string literal (UTF-8 passed through, control characters escaped).
std::string jsonString(const std::string &s);

} // namespace cli
