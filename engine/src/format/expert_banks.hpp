// Opening a container's expert banks, one per MoE layer, as the session does: each bank's
// record shape from the manifest (native records, or VQ3R codes against `books`), checked
// against what a record of that shape must hold before any record is read.
#pragma once

#include "format/codebooks.hpp"
#include "format/expert_bank.hpp"
#include "format/manifest.hpp"

#include <map>
#include <memory>
#include <string>

namespace waste::format {

// Banks by layer, dense layers left out. `books` is read only for VQ3R containers (native
// records carry their own scales). Throws Error(Format) naming `manifestPath` for a bank
// whose codebooks lie past `books` or whose records are too small for the config's expert.
std::map<int, std::shared_ptr<ExpertBank>> openExpertBanks(const std::string &dir, const Manifest &manifest,
                                                           const Codebooks &books, const std::string &manifestPath);

} // namespace waste::format
