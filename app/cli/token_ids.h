// `--ids 1,2,3`: token ids given directly, so `waste eval` can compare logits with any
// outside implementation on the same positions without going through the tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cli {

// Parses comma-separated decimal ids, each in [0, vocab); throws UsageError naming the
// bad entry and what to give instead.
std::vector<int32_t> parseTokenIds(const std::string &text, int vocab);

} // namespace cli
