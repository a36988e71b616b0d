// The converter's manifest.json: the layout, the banks and trunk entries the journal
// recorded, and the "converter" block (name, version, fingerprint, options), written
// through format/manifest_writer; and the fingerprint read back, which tells a finished
// container of the same source and options from any other.
#pragma once

#include "convert/hf_names.hpp"
#include "convert/native_experts.hpp"
#include "convert/resume_journal.hpp"

#include <waste/convert.hpp>

#include <string>

namespace waste::convert {

void writeManifest(const std::string &out, const Layout &layout, const ResumeState &st, const ConvertOptions &o,
                   const ExpertChoice &experts, const std::string &fingerprint);

// The converter fingerprint of out/manifest.json; empty when it is unreadable or has none.
std::string manifestFingerprint(const std::string &out);

} // namespace waste::convert
