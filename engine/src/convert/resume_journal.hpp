// The resume journal (.waste-convert.json): after each finished unit the converter
// records where trunk.bin.partial and codebooks.bin.partial end, the trunk entries and
// banks written so far and the shards reclaimed; an interrupted run resumes at the
// first unit whose bytes are not all still on disk. The fingerprint ties a journal (and
// a finished manifest) to one source and one set of options.
#pragma once

#include "convert/hf_names.hpp"

#include <waste/convert.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace waste::convert {

inline constexpr const char *kJournal = ".waste-convert.json";
inline constexpr const char *kTrunkPartial = "trunk.bin.partial";
inline constexpr const char *kCodebooksPartial = "codebooks.bin.partial";

// `experts`: the expert record format when it is not VQ3R ("MXFP4", "INT4G32/q4", ...),
// empty for VQ3R, whose fingerprints stay as they always were.
std::string fingerprintOf(const ModelSource &src, const ConvertOptions &o, const std::string &experts = {});

struct UnitEnd {
    int64_t trunk = 0, codebooks = 0;
};

struct ResumeState {
    int unitsDone = 0;
    std::vector<UnitEnd> ends;  // one per done unit
    nlohmann::ordered_json trunkEntries = nlohmann::ordered_json::array(); // each with a "unit" key
    nlohmann::ordered_json layers = nlohmann::ordered_json::object();
    std::vector<std::string> reclaimed;
};

// Reads the journal and returns how much of it is still intact on disk.
ResumeState loadResume(const std::string &out, const std::string &fingerprint, const Layout &L);

void saveJournal(const std::string &out, const std::string &fingerprint, const Layout &L, const ResumeState &st);

} // namespace waste::convert
