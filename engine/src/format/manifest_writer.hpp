// manifest.json, writer side: the JSON of each part (trunk entry, bank, expert_quant)
// and of the whole file, with keys in the order the converter has always written them
// (containers are compared byte for byte). The reader side is manifest.hpp.
#pragma once

#include "format/manifest.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace waste::format {

using OrderedJson = nlohmann::ordered_json;

// The bank file of a layer: experts-L{n}.bin.
std::string bankFileName(int layer);

// One trunk entry: name, fmt, off, shape, then for grouped formats group and scale_off,
// for F16/BF16 the encoding, then bytes (payload + scales).
struct TrunkEntryOut {
    std::string name;
    TrunkFormat format = TrunkFormat::F32;
    int64_t off = 0;
    std::vector<int64_t> shape;
    int64_t group = kTrunkGroup; // grouped formats only
    int64_t scaleOff = 0;        // grouped formats only
    int64_t bytes = 0;
};
OrderedJson trunkEntryJson(const TrunkEntryOut &e);

// One bank under "layers": file, experts, bytes, codebook_base (layer is the key).
OrderedJson bankEntryJson(const BankEntry &b);

// "expert_quant": fmt, stages, vec_dim, entries, index_block, index_bits, bits_per_weight;
// for native records only fmt ("MXFP4", "FP8B128", "INT4G32", "BF16").
OrderedJson expertQuantJson(const ExpertQuant &q);

struct ManifestOut {
    std::string arch;
    std::string prefix;
    OrderedJson config;                          // as stored (text_config already hoisted)
    ExpertQuant quant;
    OrderedJson layers = OrderedJson::object();  // layer number -> bankEntryJson
    OrderedJson trunk = OrderedJson::array();    // trunkEntryJson, file order
    OrderedJson converter = OrderedJson::object();
};

// The text of manifest.json (format_version 0, one-space indent).
std::string manifestText(const ManifestOut &m);

} // namespace waste::format
